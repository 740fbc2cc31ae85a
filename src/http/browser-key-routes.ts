import { Router, type Request, type Response } from 'express';
import type { BrowserKeyRegistry } from '../accounts/browser-key-registry.js';
import { BrowserKeyLimitReached, browserKeyFields, listBrowserKeys, type BrowserKeyFields } from '../accounts/browser-keys.js';
import type { Pool } from '../db/pool.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { accountOf, accountReadAuth, type Credentials } from './auth.js';
import { checkedJsonBody } from './params.js';

/** 50 origins of up to 300 characters, and a label. */
const browserKeyBodyBytes = 32 * 1024;

function fieldsOf(body: unknown, required: boolean): BrowserKeyFields {
  const fields = browserKeyFields(body, required);
  if ('problem' in fields) throw badRequest(fields.problem);
  return fields;
}

/** An account's browser keys (docs/browser.md, Browser keys), under /admin/v1/accounts/:license. */
export function browserKeyRoutes(credentials: Credentials, browserKeys: BrowserKeyRegistry, pool: Pool): Router {
  const router = Router({ mergeParams: true });
  const auth = accountReadAuth(credentials);

  const keys = router.route('/browser-keys');
  keys.get(auth, async (_req: Request, res: Response) => {
    res.json({ browserKeys: await listBrowserKeys(pool, accountOf(res).id) });
  });

  keys.post(auth, ...checkedJsonBody(browserKeyBodyBytes), async (req: Request, res: Response) => {
    const { label, origins } = fieldsOf(req.body, true) as Required<BrowserKeyFields>;
    const account = accountOf(res);
    try {
      const created = await browserKeys.add(account.licenseCode, label, origins);
      if (!created) throw notFound('unknown license code');
      req.log.info({ accountId: account.id, browserKeyId: created.id, origins: origins.length }, 'browser key created');
      res.status(201).json(created);
    } catch (error) {
      if (error instanceof BrowserKeyLimitReached) throw conflict(error.message);
      throw error;
    }
  });

  router.patch('/browser-keys/:id', auth, ...checkedJsonBody(browserKeyBodyBytes), async (req: Request, res: Response) => {
    const account = accountOf(res);
    const changed = await browserKeys.change(account.id, req.params.id as string, fieldsOf(req.body, false));
    if (!changed) throw notFound('no active browser key with this id in this account');
    req.log.info({ accountId: account.id, browserKeyId: changed.id }, 'browser key changed');
    res.json(changed);
  });

  router.delete('/browser-keys/:id', auth, async (req: Request, res: Response) => {
    const account = accountOf(res);
    const keyId = req.params.id as string;
    if (!(await browserKeys.revoke(account.id, keyId))) throw notFound('no active browser key with this id in this account');
    req.log.info({ accountId: account.id, browserKeyId: keyId }, 'browser key revoked');
    res.status(204).end();
  });
  return router;
}
