import { Router, type Request, type Response } from 'express';
import { badRequest } from '../errors.js';
import { activityCounts, decodeWarningsCursor, recentWarnings, warningGroups } from '../activity/queries.js';
import { lagOfAccount } from '../../projections/runner/status.js';
import type { Pool } from '../db/pool.js';
import type { EventStore } from '../eventstore/port.js';
import { accountOf } from './auth.js';
import { stringQuery } from './params.js';

const defaultRecent = 100;
const maxRecent = 1_000;

function recentLimit(req: Request): number {
  const raw = req.query.limit;
  if (raw === undefined) return defaultRecent;
  const limit = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || limit < 1 || limit > maxRecent) {
    throw badRequest(`limit must be an integer from 1 to ${maxRecent}`);
  }
  return limit;
}

/** An exact-match filter of the recent list: absent is none; `field=` (empty) is the item as a whole. */
function filterOf(req: Request, name: 'reason' | 'field' | 'endpoint'): string | undefined {
  const value = stringQuery(req, name);
  if (value === '' && name !== 'field') return undefined;
  return value;
}

/**
 * The account's ingestion warnings and overview (docs/api.md), from the ingest activity tables.
 * Mounted by readRoutes behind accountReadAuth: every query is of the authenticated account.
 */
export function activityRoutes(pool: Pool, store: EventStore): Router {
  const router = Router({ mergeParams: true });

  router.get('/warnings', async (_req: Request, res: Response) => {
    res.json({ groups: await warningGroups(pool, accountOf(res).id) });
  });

  router.get('/warnings/recent', async (req: Request, res: Response) => {
    const limit = recentLimit(req);
    const cursorText = stringQuery(req, 'cursor');
    const before = cursorText === undefined || cursorText === '' ? undefined : decodeWarningsCursor(cursorText);
    if (before === null) throw badRequest('cursor is not one this API gave out');
    res.json(await recentWarnings(pool, accountOf(res).id, limit, before, { reason: filterOf(req, 'reason'), field: filterOf(req, 'field'), endpoint: filterOf(req, 'endpoint') }));
  });

  router.get('/overview', async (_req: Request, res: Response) => {
    const accountId = accountOf(res).id;
    // This account's read models only: another account's backlog is not this one's lag.
    const [counts, lag] = await Promise.all([activityCounts(pool, accountId), lagOfAccount(pool, store, accountId)]);
    res.json({ ...counts, projections: { lagSeconds: lag.lagSeconds, lagEvents: lag.lagEvents, caughtUp: lag.lagEvents === 0 } });
  });
  return router;
}
