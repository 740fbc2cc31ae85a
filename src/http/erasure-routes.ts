import { Router, type Request, type Response } from 'express';
import type { Pool } from '../db/pool.js';
import { checkErasureRequest, decodeErasureCursor, erasuresNaming, findErasure, isErasureId, listErasures, requestErasure } from '../erasure/requests.js';
import type { AccountRefs } from '../eventstore/events.js';
import { badRequest, notFound } from '../errors.js';
import type { Validator } from '../ingest/validation.js';
import { accountOf, accountReadAuth, callerOf, type Credentials } from './auth.js';
import { checkedJsonBody, stringQuery } from './params.js';

const erasureBodyBytes = 4 * 1024;
const defaultLimit = 50;
const maxLimit = 200;

export interface ErasureRouteParts {
  credentials: Credentials;
  pool: Pool;
  validator: Validator;
  /** Told of each new request, so that this process's runner starts on it at once. */
  requested: () => void;
  /** The pseudonyms erasures keep of the ids. */
  pseudonyms: { of(accountId: string): Promise<AccountRefs> };
}

/**
 * Erasure of a person (docs/api.md, Erasure) under /v1/accounts/:license: request one, see one,
 * list the account's. The account's own ingest+read token or session, or the operator.
 */
export function erasureRoutes({ credentials, pool, validator, requested, pseudonyms }: ErasureRouteParts): Router {
  const router = Router({ mergeParams: true });
  const auth = accountReadAuth(credentials);

  router.post('/erasures', auth, ...checkedJsonBody(erasureBodyBytes), async (req: Request, res: Response) => {
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
    const checked = checkErasureRequest(validator, body);
    if (!checked.ok) throw badRequest(checked.message);
    const account = accountOf(res);
    const erasure = await requestErasure(pool, await pseudonyms.of(account.id), checked.request, callerOf(res));
    // The ids are the person's: the log names the erasure only.
    req.log.info({ accountId: account.id, erasureId: erasure.id }, 'erasure requested');
    requested();
    res.status(202).json(erasure);
  });

  // The auditor's question, was this id erased: the id in a body, never in a URL that logs keep.
  router.post('/erasures/lookup', auth, ...checkedJsonBody(erasureBodyBytes), async (req: Request, res: Response) => {
    const body: unknown = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
    const checked = checkErasureRequest(validator, body);
    if (!checked.ok) throw badRequest(checked.message);
    res.json(await erasuresNaming(pool, await pseudonyms.of(accountOf(res).id), checked.request));
  });

  router.get('/erasures', auth, async (req: Request, res: Response) => {
    const limitText = stringQuery(req, 'limit');
    const limit = limitText === undefined ? defaultLimit : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit) throw badRequest(`limit must be an integer from 1 to ${maxLimit}`);
    const cursorText = stringQuery(req, 'cursor');
    const cursor = cursorText === undefined ? undefined : decodeErasureCursor(cursorText);
    if (cursor === null) throw badRequest('cursor is not one this API gave out');
    res.json(await listErasures(pool, accountOf(res).id, limit, cursor));
  });

  router.get('/erasures/:id', auth, async (req: Request, res: Response) => {
    const id = (req.params.id as string).toLowerCase();
    const erasure = isErasureId(id) ? await findErasure(pool, accountOf(res).id, id) : null;
    if (!erasure) throw notFound('no erasure with this id in this account');
    res.json(erasure);
  });
  return router;
}
