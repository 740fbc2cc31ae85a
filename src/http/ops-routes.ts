import { Router } from 'express';
import { quickPing } from '../db/pool.js';
import { AppError } from '../errors.js';
import { storeUnavailable } from './errors.js';
import { MetricsAccess, metricsTokenRequired } from './metrics-auth.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { EventStore } from '../eventstore/port.js';
import type { Metrics } from '../metrics.js';

/**
 * Health (docs/operations.md) and metrics.
 * - `/livez`: the process is up and its event loop answers. Always 200, also while stopping or with
 *   the store down: a restart would not help with either.
 * - `/readyz`: the process accepts requests and can store what it acknowledges: not stopping, the
 *   event store (and with EventStoreDB, PostgreSQL) reachable; 503 otherwise.
 * - `/healthz`: the same as `/readyz`, under the name load balancers are set up with.
 * - `/metrics`: Prometheus text; with METRICS_TOKEN set, only for a request that holds it.
 */
/** What the health and metrics routes look at. */
export interface OpsRouteParts {
  config: Pick<Config, 'eventStoreUrl' | 'metricsToken'>;
  store: EventStore;
  pool: Pool;
  metrics: Metrics;
}

export function opsRoutes({ config, store, pool, metrics }: OpsRouteParts, isShuttingDown: () => boolean): Router {
  const router = Router();
  const ready = async (): Promise<void> => {
    if (isShuttingDown()) throw new AppError(503, 'shutting down', 'request', 'shutting_down');
    try {
      await store.ping();
    } catch {
      throw storeUnavailable('the event store cannot be reached');
    }
    // With the events in EventStoreDB, accepting an item also needs Postgres (accounts, registries).
    if (config.eventStoreUrl) {
      try {
        await quickPing(pool);
      } catch {
        throw storeUnavailable('the database cannot be reached');
      }
    }
  };
  router.get('/livez', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get(['/readyz', '/healthz'], async (_req, res) => {
    await ready();
    res.json({ status: 'ok' });
  });
  const metricsAccess = new MetricsAccess(config.metricsToken);
  router.get('/metrics', async (req, res) => {
    if (!metricsAccess.allows(req.get('authorization'))) {
      throw new AppError(401, metricsTokenRequired, 'request', 'unauthorized', { 'WWW-Authenticate': 'Bearer' });
    }
    res.type(metrics.registry.contentType).send(await metrics.text());
  });
  return router;
}
