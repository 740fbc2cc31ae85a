import express, { Router } from 'express';
import { createAccount, listAccounts } from '../accounts/accounts.js';
import { accountNameProblem } from '../accounts/accounts-text.js';
import { badRequest } from '../errors.js';
import type { Pool } from '../db/pool.js';
import { adminAuth, type Credentials } from './auth.js';
import { checkedJsonBody } from './params.js';

/** Operator calls under /admin/v1: ADMIN_TOKEN or an operator session. */
export function adminRoutes(credentials: Credentials, pool: Pool): Router {
  const router = Router();
  const auth = adminAuth(credentials);
  const accounts = router.route('/accounts');
  accounts.get(auth, async (_req: express.Request, res: express.Response) => {
    const listed = await listAccounts(pool);
    res.json({ accounts: listed.map(({ licenseCode, name, createdAt }) => ({ licenseCode, name, createdAt })) });
  });
  accounts.post(auth, ...checkedJsonBody(64 * 1024), async (req: express.Request, res: express.Response) => {
    const name = (req.body as { name?: unknown } | null)?.name;
    const problem = accountNameProblem(name);
    if (problem) throw badRequest(problem);
    const account = await createAccount(pool, (name as string).trim());
    req.log.info({ accountId: account.id }, 'account created');
    res.status(201).json({ licenseCode: account.licenseCode, accessToken: account.accessToken, name: account.name });
  });
  return router;
}
