import express, { Router } from 'express';
import { createAccount } from '../accounts.js';
import { badRequest } from '../errors.js';
import type { Services } from '../services.js';
import { adminAuth } from './auth.js';
import { jsonBody } from './body.js';

/** Operator calls under /admin/v1, behind ADMIN_TOKEN. */
export function adminRoutes(services: Services): Router {
  const router = Router();
  router.post('/accounts', adminAuth(services.config.adminToken), ...jsonBody(64 * 1024), async (req: express.Request, res: express.Response) => {
    const name = (req.body as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || name.trim() === '') throw badRequest('name is required and must be a non-empty string');
    if (name.length > 200) throw badRequest('name must be at most 200 characters');
    const account = await createAccount(services.pool, name.trim());
    req.log.info({ accountId: account.id }, 'account created');
    res.status(201).json({ licenseCode: account.licenseCode, accessToken: account.accessToken, name: account.name });
  });
  return router;
}
