import express, { Router } from 'express';
import { createAccount, listAccounts } from '../accounts.js';
import { badRequest } from '../errors.js';
import type { Services } from '../services.js';
import { adminAuth } from './auth.js';
import { jsonBody } from './body.js';

/** Operator calls under /admin/v1: ADMIN_TOKEN or an operator session. */
export function adminRoutes(services: Services): Router {
  const router = Router();
  const auth = adminAuth(services);
  const accounts = router.route('/accounts');
  accounts.get(auth, async (_req: express.Request, res: express.Response) => {
    const listed = await listAccounts(services.pool);
    res.json({ accounts: listed.map(({ licenseCode, name, createdAt }) => ({ licenseCode, name, createdAt })) });
  });
  accounts.post(auth, ...jsonBody(64 * 1024), async (req: express.Request, res: express.Response) => {
    const name = (req.body as { name?: unknown } | null)?.name;
    if (typeof name !== 'string' || name.trim() === '') throw badRequest('name is required and must be a non-empty string');
    if (name.length > 200) throw badRequest('name must be at most 200 characters');
    const account = await createAccount(services.pool, name.trim());
    req.log.info({ accountId: account.id }, 'account created');
    res.status(201).json({ licenseCode: account.licenseCode, accessToken: account.accessToken, name: account.name });
  });
  return router;
}
