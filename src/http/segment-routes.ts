import { Router, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { AccountDirectory } from '../accounts/directory.js';
import type { BrowserKeyRegistry } from '../accounts/browser-key-registry.js';
import { isBrowserKeyLike } from '../accounts/browser-keys.js';
import type { AddressPolicies } from '../accounts/address-policy.js';
import { accessTokenPrefix } from '../config.js';
import { badRequest, invalidItem, notFound } from '../errors.js';
import type { IngestActivity } from '../activity/recorder.js';
import { maxNestingDepth } from '../ingest/nesting.js';
import type { Endpoint, IngestContext } from '../ingest/request.js';
import type { ItemResult } from '../ingest/results.js';
import { mapMessage, segmentTypes, type MappedMessage, type SegmentType } from '../ingest/segment-messages.js';
import { ingestSegment, productEventCount } from '../ingest/segment.js';
import { requestClock } from '../ingest/segment-time.js';
import { freshTrackIds } from '../ingest/track-ids.js';
import type { UserCommandDeps } from '../ingest/users.js';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics.js';
import { accountOf } from './auth.js';
import type { AccountAdmission } from './account-admission.js';
import type { BodyBudget } from './body-budget.js';
import { bulkBytes, forgetRawBody, jsonBody, singleItemBytes, type JsonBodyOptions } from './body.js';
import type { BrowserKeyLimits } from './browser-limits.js';
import { admitAccessToken, admitBrowserKey, refused } from './ingest-auth.js';
import { itemCounter } from './item-counts.js';
import type { IngestRateLimits } from './rate-limit.js';

/** At most this many messages in a batch: Segment's 500 KB of the smallest messages. */
export const maxBatchMessages = 5_000;

/** Product events of one request at most (each message's list holds at most 100). */
export const maxProductEventsPerRequest = 5_000;

/**
 * Bodies whose write key is in the body are read before the account is known: they may be as
 * large as Segment's own limits (500 KB a batch, 32 KB a message, with room), not as the spec's.
 */
export const bodyKeyBatchBytes = 512 * 1024;
export const bodyKeyMessageBytes = 64 * 1024;

const withoutWriteKey = (message: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(message).filter(([key]) => key !== 'writeKey'));

/** The short paths of analytics-next (`/v1/t`), by call. */
const shortPaths: Record<SegmentType, string> = { identify: 'i', track: 't', page: 'p', screen: 's', group: 'g', alias: 'a' };

export interface SegmentRouteParts {
  commands: UserCommandDeps;
  accounts: AccountDirectory;
  browserKeys: BrowserKeyRegistry;
  browserLimits: BrowserKeyLimits;
  addressPolicies: AddressPolicies;
  config: Pick<Config, 'minBodyBytesPerSecond'>;
  rateLimits: IngestRateLimits;
  bodies: BodyBudget;
  /** Turns for one account's batches (a key in the body is known only once the body is read). */
  admission: AccountAdmission;
  metrics: Metrics;
  activity: IngestActivity;
}

/** The write key of an Authorization header: HTTP Basic with the key as user name (Segment's form), or a bearer/bare token. */
function headerWriteKey(header: string | undefined): string | null {
  if (!header) return null;
  const basic = /^basic\s+(\S+)\s*$/i.exec(header);
  if (!basic) return /^bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? null;
  const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  return user === '' ? null : user;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Segment's tracking API (docs/segment.md), beside the spec's own: what Segment's libraries, and
 * those of RudderStack and Jitsu, post when their host is set to this service. The write key is a
 * browser key (from pages of its origins) or an access token (from servers). Each message becomes
 * the spec's items (src/ingest/segment-messages.ts), stored by the spec's commands.
 */
export function segmentRoutes(parts: SegmentRouteParts): Router {
  const { commands, accounts, browserKeys, browserLimits, addressPolicies, config, rateLimits, bodies, admission, metrics, activity } = parts;
  const router = Router();
  const count = itemCounter(metrics, activity);
  const minBytesPerSecond = config.minBodyBytesPerSecond;

  /**
   * The account of a write key, from the header before the body is read, or from the body's
   * writeKey after (analytics-next sends it there). The limits come once the account is known.
   */
  async function authenticate(req: Request, res: Response, key: string): Promise<void> {
    const origin = req.get('origin');
    if (isBrowserKeyLike(key)) return admitBrowserKey(res, origin, await browserKeys.authenticateKey(key), 'invalid write key');
    if (!key.startsWith(accessTokenPrefix)) throw refused.unauthorized('invalid write key');
    admitAccessToken(res, origin, await accounts.authenticateToken(key), 'invalid write key');
  }

  /** The header's write key: Authorization, or X-Write-Key (Jitsu's). */
  const headerKey = (req: Request): string | null => headerWriteKey(req.get('authorization')) ?? (req.get('x-write-key') || null);

  const headerAuth = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = headerKey(req);
    if (key !== null) await authenticate(req, res, key);
    next();
  };

  const bodyAuth = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const body: unknown = req.body;
    const bodyKey = isObject(body) ? body.writeKey : undefined;
    // The key is a credential: never in a Warnings excerpt (the body as read, or as parsed).
    if (isObject(body) && bodyKey !== undefined) {
      forgetRawBody(req);
      delete body.writeKey;
    }
    if (res.locals.account !== undefined) {
      if (bodyKey !== undefined && headerKey(req) !== bodyKey) throw badRequest('writeKey in the body differs from the write key of the Authorization header: send one');
      return next();
    }
    if (typeof bodyKey !== 'string' || bodyKey === '') throw refused.unauthorized('missing write key: send it as the user name of HTTP Basic authorization, or as writeKey in the body');
    await authenticate(req, res, bodyKey);
    next();
  };

  /** The body's reservation and reading: up to `limit` when the header named the account, else up to `unauthenticatedLimit`. */
  function bodyOf(limit: number, unauthenticatedLimit: number, options: JsonBodyOptions): RequestHandler[] {
    const known = [bodies.reserve(limit), ...jsonBody(limit, options)];
    const unknown = [bodies.reserve(unauthenticatedLimit), ...jsonBody(unauthenticatedLimit, options)];
    return [...known, ...unknown].map((handler, index) => {
      const forKnown = index < known.length;
      return (req: Request, res: Response, next: NextFunction) => ((res.locals.account !== undefined) === forKnown ? handler(req, res, next) : next());
    });
  }

  /** Maps, counts product events against the account's limit, stores, and counts the results. */
  async function ingest(req: Request, res: Response, endpoint: Endpoint, sent: unknown[], callType: SegmentType | undefined, batchSentAt?: unknown, sharedContext?: unknown): Promise<ItemResult[]> {
    // A message's own writeKey (analytics-next's batches carry one each) is no part of what is
    // kept of it, in Warnings' excerpts either.
    const raw = sent.map((m) => (isObject(m) && 'writeKey' in m ? withoutWriteKey(m) : m));
    const account = accountOf(res);
    const receivedAt = new Date().toISOString();
    const addressPolicy = await addressPolicies.of(account.id);
    // A page's own address stands for the visitor's: a server's is not the person's.
    const pageAddress = res.locals.browserKeyId !== undefined ? req.ip : undefined;
    const settings = { accountId: account.id, clock: requestClock(receivedAt, batchSentAt), addressPolicy, sharedContext, ...(pageAddress !== undefined && { pageAddress }) };
    const messages: MappedMessage[] = raw.map((message) => mapMessage(message, callType, settings));
    const products = productEventCount(messages);
    if (products > maxProductEventsPerRequest) throw badRequest(`the messages hold ${products} product events: at most ${maxProductEventsPerRequest.toLocaleString('en')} per request`);
    if (products > 0) await rateLimits.consumeProductEvents(res, products);
    const ctx: IngestContext = { accountId: account.id, endpoint, receivedAt, trackIds: freshTrackIds };
    const results = await ingestSegment(commands, ctx, messages);
    count(req, ctx, results, callType === undefined ? raw : undefined, (index) => messages[index]?.source.library);
    return results;
  }

  const publicResult = (result: ItemResult) => (result.status === 'queued' ? result : { status: 'error' as const, message: result.message });

  // /v1/import: where analytics-java and analytics-ruby send their batches.
  const batchPaths = ['/v1/batch', '/v1/b', '/v1/import'];
  router.post(batchPaths, headerAuth, admission.bulk(), ...bodyOf(bulkBytes, bodyKeyBatchBytes, { maxDepth: maxNestingDepth + 2, itemLevel: 2, minBytesPerSecond, textPlain: true }), bodyAuth, browserLimits.middleware(), rateLimits.middleware('segment/batch'), async (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || !Array.isArray(body.batch)) throw badRequest('body must be a JSON object whose batch is an array of messages');
    const batch: unknown[] = body.batch;
    if (batch.length === 0) throw badRequest('batch must hold at least one message');
    if (batch.length > maxBatchMessages) throw badRequest(`batch holds ${batch.length} messages: at most ${maxBatchMessages.toLocaleString('en')} per request`);
    const results = await ingest(req, res, 'segment/batch', batch, undefined, body.sentAt, body.context);
    res.json({ response: results.map(publicResult) });
  });

  for (const type of segmentTypes) {
    router.post([`/v1/${type}`, `/v1/${shortPaths[type]}`], headerAuth, admission.single(), ...bodyOf(singleItemBytes, bodyKeyMessageBytes, { minBytesPerSecond, textPlain: true }), bodyAuth, browserLimits.middleware(), rateLimits.middleware('segment'), async (req, res) => {
      if (!isObject(req.body)) throw badRequest('body must be a JSON object');
      const [result] = (await ingest(req, res, 'segment', [req.body], type)) as [ItemResult];
      if (result.status === 'error') throw invalidItem(result.message, result.reason);
      res.json({ response: result });
    });
  }

  /**
   * The settings a Segment browser library loads from its CDN (`cdnURL`) before it sends anything:
   * where to send (this service) and nothing else to load. Only for a browser key, whose settings
   * are public like the key; an access token in this URL is refused and must be rotated.
   */
  router.get('/v1/projects/:writeKey/settings', async (req, res) => {
    const key = String(req.params.writeKey);
    if (key.startsWith(accessTokenPrefix)) throw refused.secretInUrl();
    if (!isBrowserKeyLike(key) || !(await browserKeys.authenticateKey(key))) throw notFound('unknown write key: the settings are those of a browser key');
    // Behind a proxy (TRUST_PROXY), the host and scheme the page used, as the proxy says.
    const host = req.host ?? '';
    // private: the document names the host the request came by, which a shared cache keyed on the URL must not hand to others.
    res.set('Cache-Control', 'private, max-age=300').json(browserSettings(key, `${host}/v1`, req.protocol));
  });

  return router;
}

/** The settings document of analytics-next, as Segment's CDN serves it, with nothing to load but this service. */
export function browserSettings(writeKey: string, apiHost: string, protocol: string): Record<string, unknown> {
  return {
    integrations: {
      'Segment.io': { apiKey: writeKey, apiHost, protocol, unbundledIntegrations: [], addBundledMetadata: true, maybeBundledConfigIds: {}, versionSettings: { version: '4.4.7', componentTypes: ['browser'] } },
    },
    plan: { track: { __default: { enabled: true, integrations: {} } }, identify: { __default: { enabled: true } }, group: { __default: { enabled: true } } },
    edgeFunction: {},
    analyticsNextEnabled: true,
    middlewareSettings: {},
    enabledMiddleware: {},
    metrics: { sampleRate: 0 },
    legacyVideoPluginsEnabled: false,
    remotePlugins: [],
  };
}
