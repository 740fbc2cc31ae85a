import { Router, type Request, type Response } from 'express';
import { isTokenScope, labelProblem, listTokens, TokenChangeRefused, tokenScopes } from '../accounts/tokens.js';
import { badRequest, conflict, notFound } from '../errors.js';
import type { Pool } from '../db/pool.js';
import { accountOf, accountReadAuth, type Credentials } from './auth.js';
import { checkedJsonBody } from './params.js';

const tokenBodyBytes = 4 * 1024;

/** An account's access tokens (docs/api.md, Access tokens), under /admin/v1/accounts/:license. */
export function tokenRoutes(credentials: Credentials, pool: Pool): Router {
  const router = Router({ mergeParams: true });
  const auth = accountReadAuth(credentials);

  const tokens = router.route('/tokens');
  tokens.get(auth, async (_req: Request, res: Response) => {
    res.json({ tokens: await listTokens(pool, accountOf(res).id) });
  });

  tokens.post(auth, ...checkedJsonBody(tokenBodyBytes), async (req: Request, res: Response) => {
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
    const { label, scope } = body as { label?: unknown; scope?: unknown };
    const problem = labelProblem(label);
    if (problem) throw badRequest(problem);
    if (!isTokenScope(scope)) throw badRequest(`scope must be one of ${tokenScopes.join(', ')}`);
    const account = accountOf(res);
    try {
      const created = await credentials.accounts.addToken(account.licenseCode, label as string, scope);
      if (!created) throw notFound('unknown license code');
      req.log.info({ accountId: account.id, tokenId: created.id, scope }, 'access token created');
      res.status(201).json(created);
    } catch (error) {
      if (error instanceof TokenChangeRefused) throw conflict(error.message);
      throw error;
    }
  });

  router.delete('/tokens/:id', auth, async (req: Request, res: Response) => {
    const account = accountOf(res);
    const tokenId = req.params.id as string;
    try {
      const result = await credentials.accounts.revokeToken(account.licenseCode, tokenId);
      if (result !== 'revoked') throw notFound('no active access token with this id in this account');
      req.log.info({ accountId: account.id, tokenId }, 'access token revoked');
      res.status(204).end();
    } catch (error) {
      if (error instanceof TokenChangeRefused) throw conflict(error.message);
      throw error;
    }
  });
  return router;
}
