import { Router, type Request, type Response } from 'express';
import { AppError, badRequest, invalidItem } from '../errors.js';
import { ItemTooLargeError } from '../ingest/errors.js';
import type { Endpoint, IngestContext } from '../ingest/request.js';
import type { ItemResult } from '../ingest/results.js';
import { maxNestingDepth } from '../ingest/nesting.js';
import { ingestItems, ingestSingle, singleItemRules, type SingleItemEndpoint } from '../ingest/single-items.js';
import { freshTrackIds } from '../ingest/track-ids.js';
import { ingestUsers } from '../ingest/users.js';
import type { AccountDirectory } from '../accounts/directory.js';
import type { IngestActivity } from '../activity/recorder.js';
import type { Config } from '../config.js';
import type { UserCommandDeps } from '../ingest/users.js';
import { browserIdempotencyWindowHours, idempotencyWindowHours, type IdempotencyKeys } from '../ingest/idempotency.js';
import type { Metrics } from '../metrics.js';
import type { AccountAdmission } from './account-admission.js';
import type { BodyBudget } from './body-budget.js';
import type { IngestRateLimits } from './rate-limit.js';
import { accountOf } from './auth.js';
import { ingestAuth } from './ingest-auth.js';
import type { BrowserKeyRegistry } from '../accounts/browser-key-registry.js';
import type { BrowserKeyLimits } from './browser-limits.js';
import { bulkBytes, jsonBody, singleItemBytes } from './body.js';
import { itemCounter } from './item-counts.js';

/** At most this many items in a bulk request. */
export const maxBulkItems = 100;

type PublicResult = { status: 'queued'; trackID: string } | { status: 'error'; message: string };

/** A 200 reply: one result, or one per element of a bulk request. */
type ReplyBody = { response: PublicResult | PublicResult[] };

function publicResult(result: ItemResult): PublicResult {
  return result.status === 'queued' ? result : { status: 'error', message: result.message };
}

/**
 * The request's Idempotency-Key: the header, or the query parameter idempotencyKey (a page's
 * sendBeacon cannot set headers). Both, different: 400.
 */
function idempotencyKeyOf(req: Request): string | undefined {
  const header = req.get('idempotency-key');
  const query: unknown = req.query.idempotencyKey;
  if (query === undefined) return header;
  if (typeof query !== 'string') throw badRequest('query parameter idempotencyKey must be given once');
  if (header !== undefined && header !== query) throw badRequest('Idempotency-Key header and query parameter idempotencyKey differ: send one');
  return query;
}

function singleObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
  return body as Record<string, unknown>;
}

/** The ingest endpoints under /v1/accounts/:license: the five of docs/spec.md 4, and a bulk form of each kind. */
/** What the ingest routes use: the commands' own parts, and the checks and counts around them. */
export interface IngestRouteParts {
  commands: UserCommandDeps;
  accounts: AccountDirectory;
  /** Browser keys (docs/browser.md), and their limits per address and per key. */
  browserKeys: BrowserKeyRegistry;
  browserLimits: BrowserKeyLimits;
  config: Pick<Config, 'minBodyBytesPerSecond'>;
  idempotency: IdempotencyKeys;
  rateLimits: IngestRateLimits;
  bodies: BodyBudget;
  /** Turns for one account's bulk requests. */
  admission: AccountAdmission;
  metrics: Metrics;
  activity: IngestActivity;
}

export function ingestRoutes({ commands, accounts, browserKeys, browserLimits, config, idempotency, rateLimits, bodies, admission, metrics, activity }: IngestRouteParts): Router {
  const router = Router({ mergeParams: true });
  // The browser limits come right after the key is known, before the account's own.
  const auth = [ingestAuth(accounts, browserKeys), browserLimits.middleware()];
  const minBytesPerSecond = config.minBodyBytesPerSecond;

  /**
   * Runs a command under the request's Idempotency-Key, if any, and sends its reply. A key whose
   * first request was answered gets that reply again (marked Idempotent-Replayed) without running;
   * a key first used with another body is refused.
   */
  async function serve(req: Request, res: Response, endpoint: Endpoint, run: (ctx: IngestContext) => Promise<ReplyBody>): Promise<void> {
    const accountId = accountOf(res).id;
    const key = idempotencyKeyOf(req);
    // A browser's batch may be re-sent days later (docs/browser.md): its key is kept longer.
    const fromPage = res.locals.browserKeyId !== undefined;
    const windowHours = fromPage ? browserIdempotencyWindowHours : idempotencyWindowHours;
    // Pages have keys of their own: a browser key is public, and a key it claimed must never hold
    // back (422) a server's request that uses the same key.
    const keySpace = fromPage ? `browser ${endpoint}` : endpoint;
    const idempotent = key === undefined ? null : await idempotency.open(accountId, keySpace, key, req.body, windowHours);
    if (idempotent?.recordedReply) {
      res.set('Idempotent-Replayed', 'true').json(idempotent.recordedReply);
      return;
    }
    const ctx = { accountId, endpoint, receivedAt: new Date().toISOString(), trackIds: idempotent?.trackIds ?? freshTrackIds };
    let body: ReplyBody;
    try {
      body = await run(ctx);
    } catch (error) {
      // An invalid item, or one too large for the event store's writes, stored nothing: the key is
      // free again for a corrected request. After any other failure the items may be stored, so
      // the key stays bound to this body and its ids.
      if (idempotent && ((error instanceof AppError && error.form === 'item') || error instanceof ItemTooLargeError)) await idempotent.release();
      throw error;
    }
    // The items are stored; without the record a repeat still stores nothing new (same trackIDs).
    await idempotent?.record(body).catch((error: unknown) => req.log.warn({ err: error, endpoint }, 'reply of an Idempotency-Key not recorded'));
    res.json(body);
  }

  const count = itemCounter(metrics, activity);

  const single = (endpoint: 'users' | SingleItemEndpoint, ingest: (ctx: IngestContext, item: Record<string, unknown>) => Promise<ItemResult>) => {
    router.post(`/${endpoint}`, ...auth, rateLimits.middleware(endpoint), admission.single(), bodies.reserve(singleItemBytes), ...jsonBody(singleItemBytes, { minBytesPerSecond, textPlain: true }), async (req, res) => {
      const item = singleObject(req.body);
      await serve(req, res, endpoint, async (ctx) => {
        const result = await ingest(ctx, item);
        count(req, ctx, [result]);
        if (result.status === 'error') throw invalidItem(result.message, result.reason);
        return { response: result };
      });
    });
  };


  /** What a bulk request's elements are called in its messages. */
  type BulkEndpoint = Extract<Endpoint, `${string}/bulk`>;
  const bulkItemNames: Record<BulkEndpoint, string> = {
    'users/bulk': 'user',
    'events/bulk': 'event',
    'products/bulk': 'product',
    'productsevents/bulk': 'product event',
  };

  /**
   * A bulk endpoint: an array of 1 to 100 items, answered 200 with one result per element in
   * order. productsevents/bulk counts its items against the product-event limit once the body is
   * read (so bulk cannot get round it); the others count requests, as their single endpoints do.
   * The array is one level more: each element may nest as deep as a single item.
   */
  const bulk = (endpoint: BulkEndpoint, ingest: (ctx: IngestContext, items: unknown[]) => Promise<ItemResult[]>) => {
    const limit = endpoint === 'productsevents/bulk' ? [] : [rateLimits.middleware(endpoint)];
    router.post(`/${endpoint}`, ...auth, ...limit, admission.bulk(), bodies.reserve(bulkBytes), ...jsonBody(bulkBytes, { maxDepth: maxNestingDepth + 1, itemLevel: 1, minBytesPerSecond, textPlain: true }), async (req, res) => {
      const items: unknown = req.body;
      const name = bulkItemNames[endpoint];
      if (!Array.isArray(items)) throw badRequest(`body must be a JSON array of ${name}s`);
      if (items.length === 0) throw badRequest(`body must hold at least one ${name}`);
      if (items.length > maxBulkItems) throw badRequest(`at most ${maxBulkItems} ${name}s per bulk request, got ${items.length}`);
      if (endpoint === 'productsevents/bulk') await rateLimits.consumeProductEvents(res, items.length);
      await serve(req, res, endpoint, async (ctx) => {
        const results = await ingest(ctx, items);
        count(req, ctx, results, items);
        return { response: results.map(publicResult) };
      });
    });
  };

  bulk('users/bulk', (ctx, items) => ingestUsers(commands, ctx, items));
  bulk('events/bulk', (ctx, items) => ingestItems('events', commands, ctx, items));
  bulk('products/bulk', (ctx, items) => ingestItems('products', commands, ctx, items));
  bulk('productsevents/bulk', (ctx, items) => ingestItems('productsevents', commands, ctx, items));
  single('users', async (ctx, item) => (await ingestUsers(commands, ctx, [item]))[0] as ItemResult);
  for (const endpoint of Object.keys(singleItemRules) as SingleItemEndpoint[]) single(endpoint, (ctx, item) => ingestSingle(endpoint, commands, ctx, item));
  return router;
}
