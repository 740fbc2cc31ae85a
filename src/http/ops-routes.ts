import { Router } from 'express';
import { storeUnavailable } from '../errors.js';
import type { Services } from '../services.js';

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
    res.json({ status: 'ok' });
  });
  router.get('/metrics', async (_req, res) => {
    res.type(services.metrics.registry.contentType).send(await services.metrics.registry.metrics());
  });
  return router;
}
