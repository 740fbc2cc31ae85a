import { Router } from 'express';
import { storeUnavailable } from '../errors.js';
import type { Services } from '../services.js';

/** A health check must answer quickly even when the database hangs. */
const quickPing = { text: 'SELECT 1', query_timeout: 2_000 };

/** Health and metrics. */
export function opsRoutes(services: Services, isShuttingDown: () => boolean): Router {
  const router = Router();
  router.get('/healthz', async (_req, res) => {
    if (isShuttingDown()) throw storeUnavailable('shutting down');
    try {
      await services.store.ping();
    } catch {
      throw storeUnavailable('the event store cannot be reached');
    }
    // With the events in EventStoreDB, accepting an item also needs Postgres (accounts, registries).
    if (services.config.eventStoreUrl) {
      try {
        await services.pool.query(quickPing);
      } catch {
        throw storeUnavailable('the database cannot be reached');
      }
    }
    res.json({ status: 'ok' });
  });
  router.get('/metrics', async (_req, res) => {
    res.type(services.metrics.registry.contentType).send(await services.metrics.registry.metrics());
  });
  return router;
}
