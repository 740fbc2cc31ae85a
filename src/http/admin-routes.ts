import express, { Router } from 'express';
import { createAccount, listAccounts } from '../accounts.js';
import { accountNameProblem } from '../accounts-text.js';
import { badRequest } from '../errors.js';
import type { Services } from '../services.js';
import { adminAuth } from './auth.js';
import { checkedJsonBody } from './params.js';

/** Operator calls under /admin/v1: ADMIN_TOKEN or an operator session. */
export function adminRoutes(services: Services): Router {
  const router = Router();
  const auth = adminAuth(services);
  const accounts = router.route('/accounts');
  accounts.get(auth, async (_req: express.Request, res: express.Response) => {
    const listed = await listAccounts(services.pool);
    res.json({ accounts: listed.map(({ licenseCode, name, createdAt }) => ({ licenseCode, name, createdAt })) });
  });
  accounts.post(auth, ...checkedJsonBody(64 * 1024), async (req: express.Request, res: express.Response) => {
    const name = (req.body as { name?: unknown } | null)?.name;
    const problem = accountNameProblem(name);
    if (problem) throw badRequest(problem);
    const account = await createAccount(services.pool, (name as string).trim());
    req.log.info({ accountId: account.id }, 'account created');
    res.status(201).json({ licenseCode: account.licenseCode, accessToken: account.accessToken, name: account.name });
  });
  return router;
}
