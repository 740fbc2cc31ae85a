import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Services } from '../services.js';
import { adminRoutes } from './admin-routes.js';
import { dashboardRoutes } from './dashboard-routes.js';
import { errorHandler, unknownPath } from './errors.js';
import { ingestRoutes } from './ingest-routes.js';
import { openApiRoutes } from './openapi-routes.js';
import { opsRoutes } from './ops-routes.js';
import { checkPathParams, checkQuery } from './params.js';
import { projectionRoutes } from './projection-routes.js';
import { readRoutes } from './read-routes.js';
import { sessionRoutes } from './session-routes.js';
import { tokenRoutes } from './token-routes.js';
import { accessLog, routeOf } from './access-log.js';
import { ingestEndpointOf } from './route-label.js';
import { bodyExcerpt } from './body.js';
import type { Account } from '../accounts.js';
import type { Endpoint } from '../ingest/request.js';
import { excerptOfText } from '../ingest/excerpt.js';

/**
 * A request refused after its account was known (400 body, 413, 415, 422, 429) goes to the
 * account's ingest activity; 401s have no account, and 5xx are the service's, not the client's.
 */
function recordRefusal(services: Services, req: Request, res: Response, endpoint: string, reason: string): void {
  const account = res.locals.account as Account | undefined;
  if (!account || res.statusCode < 400 || res.statusCode >= 500) return;
  services.activity.rejected(account.id, {
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

export function createApp(services: Services, options: AppOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Behind a TLS proxy: req.secure (the session cookie's Secure) and req.ip follow its headers.
  if (services.config.trustProxy !== undefined) app.set('trust proxy', services.config.trustProxy);

  const isShuttingDown = options.isShuttingDown ?? (() => false);
  app.use(accessLog(services.log));
  app.use((req: Request, res: Response, next: NextFunction) => {
    // While shutting down, each keep-alive connection ends after its current reply, so that no
    // request is cut off when the remaining connections are closed.
    if (isShuttingDown()) res.set('Connection', 'close');
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = routeOf(req);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      services.metrics.requests.inc({ method: req.method, route, status: String(res.statusCode) });
      services.metrics.latency.observe({ method: req.method, route }, seconds);
      // Item-level rejections are counted by the routes; request-level ones (401, 413, 429, ...) here.
      const reason = res.locals.rejectReason as string | undefined;
      const endpoint = ingestEndpointOf(route);
      if (endpoint && reason && res.locals.itemRejected !== true) {
        services.metrics.rejectedItems.inc({ endpoint, reason });
        recordRefusal(services, req, res, endpoint, reason);
      }
    });
    next();
  });

  app.use(opsRoutes(services, isShuttingDown));
  app.use(openApiRoutes());
  app.use('/v1/accounts/:license', ingestRoutes(services));
  app.use('/admin/v1', checkQuery);
  app.use('/admin/v1', sessionRoutes(services));
  // Before the account routes: operator credentials only, also for the rebuild of one account.
  app.use('/admin/v1', projectionRoutes(services));
  app.use('/admin/v1/accounts/:license', tokenRoutes(services));
  app.use('/admin/v1/accounts/:license', readRoutes(services));
  app.use('/admin/v1', adminRoutes(services));
  app.use(dashboardRoutes());
  // Once every route is defined: each path parameter is checked before its route runs.
  checkPathParams(app.router);
  app.use(unknownPath);
  app.use(errorHandler(services.log, services.metrics));
  return app;
}
