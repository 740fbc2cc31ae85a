import { Router, type Request, type Response } from 'express';
import { projectionNamed, projections } from '../../projections/index.js';
import type { Projection } from '../../projections/runner/projection.js';
import { rebuildAccount, requestRebuildWithoutWaiting } from '../../projections/runner/rebuild.js';
import { RebuildUnderWay, retryParked } from '../../projections/runner/retry.js';
import { projectionStatus } from '../../projections/runner/status.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Pool } from '../db/pool.js';
import type { EventStore } from '../eventstore/port.js';
import { adminAuth, type Credentials } from './auth.js';
import { optionalJsonBody } from './params.js';

const conflict = (message: string): AppError => new AppError(409, message, 'request', 'conflict');

const accountRebuildBodyBytes = 4 * 1024;

/**
 * The projections an account rebuild names in its body: `{ "projection": "<name>" }`, or every one
 * without it. Any other field is refused rather than ignored: a misspelt `projection` would
 * otherwise rebuild them all.
 */
function projectionsOfBody(body: unknown): readonly Projection[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('body must be a JSON object');
  const unknownField = Object.keys(body).find((key) => key !== 'projection');
  if (unknownField !== undefined) throw badRequest(`unknown field ${JSON.stringify(unknownField)}: the body takes projection only`);
  const { projection: name } = body as { projection?: unknown };
  if (name === undefined) return projections;
  if (typeof name !== 'string') throw badRequest('projection must be the name of a projection, as text');
  const projection = projectionNamed(name);
  if (!projection) throw notFound(`no projection of this name: ${projections.map((p) => p.name).join(', ')} (leave projection out for all)`);
  return [projection];
}

/**
 * Operator calls on the projections, under /admin/v1: what `tracking projections
 * status | rebuild [--account] | retry` do, except that a rebuild is only asked for here (the
 * workers do it) and followed in the status. Mounted before the account routes, whose own
 * authentication (an account's credentials) does not apply to the account rebuild.
 */
/** What the operator's projection routes use. */
export interface ProjectionRouteParts {
  credentials: Credentials;
  pool: Pool;
  store: EventStore;
}

export function projectionRoutes({ credentials, pool, store }: ProjectionRouteParts): Router {
  const router = Router();
  const operator = adminAuth(credentials);

  const projectionOf = (req: Request): Projection => {
    const projection = projectionNamed(req.params.name as string);
    if (!projection) throw notFound('no projection of this name');
    return projection;
  };

  router.get('/projections', operator, async (_req: Request, res: Response) => {
    res.json(await projectionStatus(pool, store));
  });

  router.post('/projections/:name/rebuild', operator, async (req: Request, res: Response) => {
    const projection = projectionOf(req);
    const { requested, rebuild } = await requestRebuildWithoutWaiting(pool, projection);
    if (!requested) throw conflict(`a rebuild of ${projection.name} is already ${rebuild?.state ?? 'under way'}: follow it in GET /admin/v1/projections`);
    req.log.info({ projection: projection.name }, 'projection rebuild requested');
    res.status(202).json({ projection: projection.name, rebuild });
  });

  // One account: its rows, cursors and parked events go in one transaction, and the workers replay
  // it while every other account goes on. Nothing to wait for: a second request replays it again.
  router.post('/accounts/:license/projections/rebuild', operator, ...optionalJsonBody(accountRebuildBodyBytes), async (req: Request, res: Response) => {
    const account = await credentials.accounts.find(req.params.license as string);
    if (!account) throw notFound('unknown license code');
    const selected = projectionsOfBody(req.body);
    await rebuildAccount(pool, selected, account.id);
    const names = selected.map((p) => p.name);
    req.log.info({ accountId: account.id, projections: names }, 'account rebuild requested');
    res.status(202).json({ accountId: account.id, projections: names });
  });

  router.post('/projections/:name/retry', operator, async (req: Request, res: Response) => {
    const projection = projectionOf(req);
    try {
      res.json(await retryParked(pool, store, projection, req.log));
    } catch (error) {
      if (error instanceof RebuildUnderWay) throw conflict(error.message);
      throw error;
    }
  });
  return router;
}
