import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { AccountDirectory } from '../accounts/directory.js';
import type { SessionStore } from '../accounts/sessions.js';
import type { IngestActivity } from '../activity/recorder.js';
import type { Config } from '../config.js';
import type { ErasureRunner } from '../erasure/runner.js';
import type { Pool } from '../db/pool.js';
import type { EventStore } from '../eventstore/port.js';
import type { UserCommandDeps } from '../ingest/users.js';
import type { IdempotencyKeys } from '../ingest/idempotency.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { Credentials } from './auth.js';
import { AccountAdmission } from './account-admission.js';
import { BodyBudget } from './body-budget.js';
import type { BrowserKeyRegistry } from '../accounts/browser-key-registry.js';
import { BrowserKeyLimits } from './browser-limits.js';
import { browserKeyRoutes } from './browser-key-routes.js';
import { ingestCors } from './cors.js';
import { sdkRoutes } from './sdk-routes.js';
import { IngestRateLimits } from './rate-limit.js';
import { AdminTokenGuesses } from './sign-in-limit.js';
import { adminRoutes } from './admin-routes.js';
import { dashboardRoutes } from './dashboard-routes.js';
import { errorHandler, unknownPath } from './errors.js';
import { ingestRoutes } from './ingest-routes.js';
import { segmentRoutes } from './segment-routes.js';
import { AddressPolicies } from '../accounts/address-policy.js';
import { openApiRoutes } from './openapi-routes.js';
import { opsRoutes } from './ops-routes.js';
import { checkPathParams, checkQuery } from './params.js';
import { projectionRoutes } from './projection-routes.js';
import { readRoutes } from './read-routes.js';
import { exportRoutes } from './export-routes.js';
import type { FeedWaits } from '../export/feed.js';
import { sessionRoutes } from './session-routes.js';
import { tokenRoutes } from './token-routes.js';
import { settingsRoutes } from './settings-routes.js';
import { accessLog, routeOf } from './access-log.js';
import { ingestEndpointOf } from './route-label.js';
import { erasureRoutes } from './erasure-routes.js';
import { bodyExcerpt } from './body.js';
import type { Account } from '../accounts/account.js';
import type { Endpoint } from '../ingest/request.js';
import { excerptOfText } from '../ingest/excerpt.js';

/**
 * A request refused after its account was known (400 body, 413, 415, 422, 429), or for credentials
 * or origin of a license code that names an account (401, 403), goes to the account's ingest
 * activity; 5xx are the service's, not the client's.
 */
function recordRefusal(activity: IngestActivity, req: Request, res: Response, endpoint: string, reason: string): void {
  // A request refused for its credentials or origin (401, 403) has no account of its own, but its
  // license code may name one: its owner sees the refusal (docs/browser.md).
  const account = (res.locals.account ?? res.locals.refusedAccount) as Account | undefined;
  if (!account || res.statusCode < 400 || res.statusCode >= 500) return;
  activity.rejected(account.id, {
    endpoint: endpoint as Endpoint,
    reason,
    // A refused request is about the request as a whole.
    field: '',
    status: res.statusCode,
    message: excerptOfText((res.locals.rejectMessage as string | undefined) ?? '').text,
    excerpt: bodyExcerpt(req),
  });
}

export interface AppOptions {
  isShuttingDown?: () => boolean;
}

/** What the HTTP app is made of (src/service-parts.ts builds them once per process). */
export interface AppParts {
  config: Config;
  log: Logger;
  pool: Pool;
  metrics: Metrics;
  store: EventStore;
  /** The ingest commands' own parts: the store, the validator, the attribute types and the identity map. */
  commands: UserCommandDeps;
  idempotency: IdempotencyKeys;
  accounts: AccountDirectory;
  /** Browser keys of every account, checked in memory (docs/browser.md). */
  browserKeys: BrowserKeyRegistry;
  /** Dashboard sessions (cookie tracking_session). */
  sessions: SessionStore;
  /** What each account's ingest accepted and rejected. */
  activity: IngestActivity;
  /** Carries out erasure requests: woken by each new one (the process starts and stops it). */
  erasures: Pick<ErasureRunner, 'wake'>;
  /** The feed's long polls, ended by this process's appends of their account. */
  feedWaits: FeedWaits;
}

export function createApp(parts: AppParts, options: AppOptions = {}): Express {
  const { config, log, pool, metrics, store, accounts, activity } = parts;
  const credentials: Credentials = {
    accounts,
    sessions: parts.sessions,
    adminToken: config.adminToken,
    // Shared by sign-in and every route that takes the admin token.
    adminTokenGuesses: new AdminTokenGuesses(),
  };
  // Bytes of request bodies held at once, by all routes together.
  const bodies = new BodyBudget(config.inflightBodyBytes, metrics);
  const admission = new AccountAdmission(config.bulkPerAccount, metrics);
  const rateLimits = new IngestRateLimits(pool, config.productEventsPerMinute, config.otherEndpointsPerMinute);
  const browserLimits = new BrowserKeyLimits(pool, config.browserAddressPerMinute, config.browserKeyPerMinute);
  const { browserKeys } = parts;
  const addressPolicies = new AddressPolicies(pool);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Behind a TLS proxy: req.secure (the session cookie's Secure) and req.ip follow its headers.
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);

  const isShuttingDown = options.isShuttingDown ?? (() => false);
  app.use(accessLog(log));
  app.use((req: Request, res: Response, next: NextFunction) => {
    // While shutting down, each keep-alive connection ends after its current reply, so that no
    // request is cut off when the remaining connections are closed.
    if (isShuttingDown()) res.set('Connection', 'close');
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = routeOf(req);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.latency.observe({ method: req.method, route }, seconds);
      // Item-level rejections are counted by the routes; request-level ones (401, 413, 429, ...) here.
      const reason = res.locals.rejectReason as string | undefined;
      const endpoint = ingestEndpointOf(route);
      if (endpoint && reason && res.locals.itemRejected !== true) {
        metrics.rejectedItems.inc({ endpoint, reason });
        recordRefusal(activity, req, res, endpoint, reason);
      }
    });
    next();
  });

  // Before every /v1 route, so that each reply carries it, errors and 404s included.
  app.use('/v1', ingestCors);
  // The ingest routes first, then Segment's: every router before a request's route is entered and
  // walked (one mounted at '/' by every request), which cost a single ingest request about a tenth
  // of its CPU when five of them came first (docs/performance.md, Route order and the young generation).
  app.use('/v1/accounts/:license', ingestRoutes({ commands: parts.commands, accounts, browserKeys, browserLimits, config, idempotency: parts.idempotency, rateLimits, bodies, admission, metrics, activity }));
  app.use(segmentRoutes({ commands: parts.commands, accounts, browserKeys, browserLimits, addressPolicies, config, rateLimits, bodies, admission, metrics, activity }));
  app.use('/v1/accounts/:license', erasureRoutes({ credentials, pool, validator: parts.commands.validator, requested: () => parts.erasures.wake(), pseudonyms: parts.commands.pseudonyms }));
  app.use(opsRoutes({ config, store, pool, metrics }, isShuttingDown));
  app.use(openApiRoutes());
  app.use(sdkRoutes());
  app.use('/admin/v1', checkQuery);
  app.use('/admin/v1', sessionRoutes(credentials));
  // Before the account routes: operator credentials only, also for the rebuild of one account.
  app.use('/admin/v1', projectionRoutes({ credentials, pool, store }));
  app.use('/admin/v1/accounts/:license', tokenRoutes(credentials, pool));
  app.use('/admin/v1/accounts/:license', browserKeyRoutes(credentials, browserKeys, pool));
  // The same AddressPolicies as Segment's routes: a change is in effect at once in this process.
  app.use('/admin/v1/accounts/:license', settingsRoutes(credentials, addressPolicies));
  app.use('/admin/v1/accounts/:license', exportRoutes({ credentials, store, log, feedWaits: parts.feedWaits, isShuttingDown }));
  app.use('/admin/v1/accounts/:license', readRoutes({ credentials, pool, store, config, pseudonyms: parts.commands.pseudonyms }));
  app.use('/admin/v1', adminRoutes(credentials, pool));
  app.use(dashboardRoutes());
  // Once every route is defined: each path parameter is checked before its route runs.
  checkPathParams(app.router);
  app.use(unknownPath);
  app.use(errorHandler(log, metrics));
  return app;
}
