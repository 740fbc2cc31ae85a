import { Router, type Request, type Response } from 'express';
import { badRequest, invalidItem } from '../errors.js';
import type { Endpoint, IngestContext, ItemResult } from '../ingest/context.js';
import { ingestEvent } from '../ingest/events.js';
import { ingestProductEvent } from '../ingest/product-events.js';
import { ingestProduct } from '../ingest/products.js';
import { freshTrackIds } from '../ingest/track-ids.js';
import { ingestUsers } from '../ingest/users.js';
import type { Services } from '../services.js';
import { accountOf, ingestAuth } from './auth.js';
import { bulkLimit, jsonBody, singleItemLimit } from './body.js';

export const maxBulkUsers = 100;

type PublicResult = { status: 'queued'; trackID: string } | { status: 'error'; message: string };

function publicResult(result: ItemResult): PublicResult {
  return result.status === 'queued' ? result : { status: 'error', message: result.message };
}

function singleObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The five ingest endpoints of spec 4, under /v1/accounts/:license. */
export function ingestRoutes(services: Services): Router {
  const router = Router({ mergeParams: true });
  const auth = ingestAuth(services.accounts);

  async function context(req: Request, res: Response, endpoint: Endpoint): Promise<IngestContext> {
    const accountId = accountOf(res).id;
    const key = req.get('idempotency-key');
    return {
      accountId,
      endpoint,
      receivedAt: new Date().toISOString(),
      trackIds: key === undefined ? freshTrackIds : await services.idempotency.trackIds(accountId, endpoint, key),
    };
  }

  function count(endpoint: Endpoint, results: ItemResult[]): void {
    for (const result of results) {
      if (result.status === 'queued') services.metrics.acceptedItems.inc({ endpoint });
      else services.metrics.rejectedItems.inc({ endpoint, reason: result.reason });
    }
  }

  function replySingle(res: Response, endpoint: Endpoint, result: ItemResult): void {
    count(endpoint, [result]);
    if (result.status === 'error') throw invalidItem(result.message, result.reason);
    res.json({ response: result });
  }

  const single = (endpoint: Endpoint, ingest: (ctx: IngestContext, item: Record<string, unknown>) => Promise<ItemResult>) => {
    router.post(`/${endpoint}`, auth, services.rateLimits.middleware(endpoint), ...jsonBody(singleItemLimit), async (req, res) => {
      const item = singleObject(req.body);
      replySingle(res, endpoint, await ingest(await context(req, res, endpoint), item));
    });
  };

  const deps = { store: services.store, validator: services.validator, registry: services.registry, identities: services.identities };

  router.post('/users/bulk', auth, services.rateLimits.middleware('users/bulk'), ...jsonBody(bulkLimit), async (req, res) => {
    const items: unknown = req.body;
    if (!Array.isArray(items)) throw badRequest('body must be a JSON array of users');
    if (items.length === 0) throw badRequest('body must hold at least one user');
    if (items.length > maxBulkUsers) throw badRequest(`at most ${maxBulkUsers} users per bulk request, got ${items.length}`);
    const results = await ingestUsers(deps, await context(req, res, 'users/bulk'), items);
    count('users/bulk', results);
    res.json({ response: results.map(publicResult) });
  });

  single('users', async (ctx, item) => (await ingestUsers(deps, ctx, [item]))[0] as ItemResult);
  single('events', (ctx, item) => ingestEvent(deps, ctx, item));
  single('products', (ctx, item) => ingestProduct(deps, ctx, item));
  single('productsevents', (ctx, item) => ingestProductEvent(deps, ctx, item));
  return router;
}
