import { Router, type Request, type Response } from 'express';
import { projectionNamed } from '../../projections/index.js';
import type { Projection } from '../../projections/runner/projection.js';
import { requestRebuildWithoutWaiting } from '../../projections/runner/rebuild.js';
import { RebuildUnderWay, retryParked } from '../../projections/runner/retry.js';
import { projectionStatus } from '../../projections/runner/status.js';
import { AppError, notFound } from '../errors.js';
import type { Services } from '../services.js';
import { adminAuth } from './auth.js';

const conflict = (message: string): AppError => new AppError(409, message, 'request', 'conflict');

/**
 * Operator calls on the projections, under /admin/v1: what `tracking projections
 * status | rebuild | retry` do, except that a rebuild is only asked for here (the workers
 * do it) and followed in the status.
 */
export function projectionRoutes(services: Services): Router {
  const router = Router();
  const operator = adminAuth(services);

  const projectionOf = (req: Request): Projection => {
    const projection = projectionNamed(req.params.name as string);
    if (!projection) throw notFound('no projection of this name');
    return projection;
  };

  router.get('/projections', operator, async (_req: Request, res: Response) => {
    res.json(await projectionStatus(services.pool, services.store));
  });

  router.post('/projections/:name/rebuild', operator, async (req: Request, res: Response) => {
    const projection = projectionOf(req);
    const { requested, rebuild } = await requestRebuildWithoutWaiting(services.pool, projection);
    if (!requested) throw conflict(`a rebuild of ${projection.name} is already ${rebuild?.state ?? 'under way'}: follow it in GET /admin/v1/projections`);
    req.log.info({ projection: projection.name }, 'projection rebuild requested');
    res.status(202).json({ projection: projection.name, rebuild });
  });

  router.post('/projections/:name/retry', operator, async (req: Request, res: Response) => {
    const projection = projectionOf(req);
    try {
      res.json(await retryParked(services.pool, services.store, projection, req.log));
    } catch (error) {
      if (error instanceof RebuildUnderWay) throw conflict(error.message);
      throw error;
    }
  });
  return router;
}
