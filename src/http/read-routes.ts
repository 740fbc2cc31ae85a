import { Router, type Request, type Response } from 'express';
import { badRequest, notFound } from '../errors.js';
import { decodeCursor, findLead, findLeadEvents, findLeads, type Lead, type LeadKind } from '../../projections/leads/queries.js';
import { findLeadTimeline } from '../../projections/leads/timeline.js';
import { decodeLiveCursor, isLiveKind, liveEvents, liveKinds } from '../../projections/track-index/live.js';
import { describeTrackLookup, lookUpTrackId } from '../../projections/track-index/queries.js';
import type { Services } from '../services.js';
import { activityRoutes } from './activity-routes.js';
import { accountOf, accountReadAuth } from './auth.js';
import { serverTiming } from './server-timing.js';

const defaultLimit = 50;
const maxLimit = 500;
/** Live events: a page the dashboard polls every second. */
const maxLiveLimit = 200;
const defaultTimelineLimit = 100;
const leadKinds: readonly string[] = ['known', 'anonymous'] satisfies LeadKind[];

function limitOf(req: Request, { fallback = defaultLimit, max = maxLimit } = {}): number {
  const raw = req.query.limit;
  if (raw === undefined) return fallback;
  const limit = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(limit) || limit < 1 || limit > max) {
    throw badRequest(`limit must be an integer from 1 to ${max}`);
  }
  return limit;
}

function stringQuery(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name} must be given once, as text`);
  return value;
}

/** The read API (docs/api.md) under /admin/v1/accounts/:license: the read models, never the event log. */
export function readRoutes(services: Services): Router {
  const router = Router({ mergeParams: true });
  router.use(serverTiming);
  router.use(accountReadAuth(services));

  router.get('/leads', async (req: Request, res: Response) => {
    const cursorText = stringQuery(req, 'cursor');
    const cursor = cursorText === undefined || cursorText === '' ? undefined : decodeCursor(cursorText);
    if (cursor === null) throw badRequest('cursor is not one this API gave out');
    const q = stringQuery(req, 'q');
    if (q !== undefined && q.length > 200) throw badRequest('q must be at most 200 characters');
    const kindText = stringQuery(req, 'kind');
    if (kindText !== undefined && !leadKinds.includes(kindText)) throw badRequest('kind must be known or anonymous');
    const kind = kindText as LeadKind | undefined;
    res.json(await findLeads(services.pool, accountOf(res).id, { q, kind, limit: limitOf(req), cursor }));
  });

  const leadOf = async (req: Request, res: Response): Promise<Lead> => {
    const lead = await findLead(services.pool, accountOf(res).id, req.params.id as string);
    if (!lead) throw notFound('no lead with this userId or anonymousId');
    return lead;
  };

  router.get('/leads/:id', async (req: Request, res: Response) => {
    res.json(await leadOf(req, res));
  });

  router.get('/leads/:id/events', async (req: Request, res: Response) => {
    const lead = await leadOf(req, res);
    res.json({ events: await findLeadEvents(services.pool, accountOf(res).id, lead, limitOf(req)) });
  });

  router.get('/leads/:id/timeline', async (req: Request, res: Response) => {
    const lead = await leadOf(req, res);
    res.json({ entries: await findLeadTimeline(services.pool, accountOf(res).id, lead, limitOf(req, { fallback: defaultTimelineLimit })) });
  });

  router.get('/track/:trackID', async (req: Request, res: Response) => {
    const trackId = req.params.trackID as string;
    const lookup = await lookUpTrackId(services.pool, services.store, trackId, accountOf(res).id);
    if (!lookup) throw notFound('unknown trackID (an accepted item is listed here within about a second)');
    res.json(describeTrackLookup(lookup));
  });

  router.get('/live', async (req: Request, res: Response) => {
    const kindText = stringQuery(req, 'kind');
    const kind = kindText === undefined || kindText === '' ? undefined : kindText;
    if (kind !== undefined && !isLiveKind(kind)) throw badRequest(`kind must be one of ${liveKinds.join(', ')}`);
    const afterText = stringQuery(req, 'after');
    const after = afterText === undefined || afterText === '' ? undefined : decodeLiveCursor(afterText);
    if (after === null) throw badRequest('after must be a cursor this API gave out');
    const limit = limitOf(req, { max: maxLiveLimit });
    res.json(await liveEvents(services.pool, accountOf(res).id, { kind, limit, after }));
  });

  router.use(activityRoutes(services));
  return router;
}
