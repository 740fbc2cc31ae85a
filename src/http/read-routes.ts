import { Router, type Request, type Response } from 'express';
import { badRequest, notFound } from '../errors.js';
import { cursorOf, limitOf, stringQuery } from './params.js';
import { decodeCursor, decodeLeadEventsCursor, findLead, findLeadEvents, findLeads, type Lead, type LeadKind } from '../../projections/leads/queries.js';
import { attributeNamePattern, maxAttributeNameLength, maxAttributeValueLength, type AttributeFilter } from '../../projections/leads/attribute-filter.js';
import { decodeTimelineCursor, findLeadTimeline } from '../../projections/leads/timeline.js';
import { decodeLiveCursor, isLiveKind, liveEvents, liveKinds } from '../../projections/track-index/live.js';
import {
  describeEvent,
  describeListedEvent,
  findStoredEvent,
  lookupPageJson,
  planTrackLookup,
  readLookupPage,
} from '../../projections/track-index/queries.js';
import { decodeCursorOf, encodeCursorOf, replyBudgetBytes } from '../../projections/reply-bytes.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { AccountRefs } from '../eventstore/events.js';
import type { EventStore } from '../eventstore/port.js';
import { activityRoutes } from './activity-routes.js';
import { productRoutes } from './product-routes.js';
import { accountOf, accountReadAuth, type Credentials } from './auth.js';
import { serverTiming } from './server-timing.js';

/** Live events: a page the dashboard polls every second. */
const maxLiveLimit = 200;
const defaultTimelineLimit = 100;
const leadKinds: readonly string[] = ['known', 'anonymous'] satisfies LeadKind[];

/** The leads list's filter by a custom attribute: `attribute` and `value` together, or neither (an empty `attribute` is none). */
function attributeFilterOf(req: Request): AttributeFilter | undefined {
  const name = stringQuery(req, 'attribute');
  const value = stringQuery(req, 'value');
  if (name === undefined || name === '') {
    if (value !== undefined) throw badRequest('value needs attribute: the custom attribute it is the value of');
    return undefined;
  }
  if (name.length > maxAttributeNameLength || !attributeNamePattern.test(name)) {
    throw badRequest(`attribute must be the name of a custom attribute: a lowercase letter, then lowercase letters, digits and _, at most ${maxAttributeNameLength} characters`);
  }
  if (value === undefined) throw badRequest('attribute needs value: the value the leads hold');
  if (value.length > maxAttributeValueLength) throw badRequest(`value must be at most ${maxAttributeValueLength} characters`);
  return { name, value };
}

/** The read API (docs/api.md) under /admin/v1/accounts/:license: the read models, never the event log. */
/** What the read API uses: the read models and the event store, behind the account checks. */
export interface ReadRouteParts {
  credentials: Credentials;
  pool: Pool;
  store: EventStore;
  config: Pick<Config, 'leadsExactCountMs'>;
  /** The pseudonyms of ids that person streams are named by. */
  pseudonyms: { of(accountId: string): Promise<AccountRefs> };
}

export function readRoutes({ credentials, pool, store, config, pseudonyms }: ReadRouteParts): Router {
  const router = Router({ mergeParams: true });
  router.use(serverTiming);
  router.use(accountReadAuth(credentials));

  router.get('/leads', async (req: Request, res: Response) => {
    const cursor = cursorOf(req, decodeCursor);
    const q = stringQuery(req, 'q');
    if (q !== undefined && q.length > 200) throw badRequest('q must be at most 200 characters');
    const kindText = stringQuery(req, 'kind');
    if (kindText !== undefined && !leadKinds.includes(kindText)) throw badRequest('kind must be known or anonymous');
    const kind = kindText as LeadKind | undefined;
    const attribute = attributeFilterOf(req);
    res.json(await findLeads(pool, accountOf(res).id, { q, kind, attribute, limit: limitOf(req), cursor, exactCountMs: config.leadsExactCountMs }));
  });

  const leadOf = async (req: Request, res: Response): Promise<Lead> => {
    const lead = await findLead(pool, accountOf(res).id, req.params.id as string);
    if (!lead) throw notFound('no lead with this userId or anonymousId');
    return lead;
  };

  router.get('/leads/:id', async (req: Request, res: Response) => {
    res.json(await leadOf(req, res));
  });

  router.get('/leads/:id/events', async (req: Request, res: Response) => {
    const cursor = cursorOf(req, decodeLeadEventsCursor);
    const lead = await leadOf(req, res);
    res.json(await findLeadEvents(pool, accountOf(res).id, lead, limitOf(req), cursor));
  });

  router.get('/leads/:id/timeline', async (req: Request, res: Response) => {
    const before = cursorOf(req, decodeTimelineCursor);
    const lead = await leadOf(req, res);
    res.json(await findLeadTimeline(pool, store, await pseudonyms.of(accountOf(res).id), lead, limitOf(req, { fallback: defaultTimelineLimit }), before));
  });

  router.get('/track/:trackID', async (req: Request, res: Response) => {
    const trackId = req.params.trackID as string;
    const cursor = cursorOf(req, (text) => decodeCursorOf('track', text, ['string', 'integer']));
    const plan = await planTrackLookup(pool, trackId, accountOf(res).id);
    if (!plan) throw notFound('unknown trackID (an accepted item is listed here within about a second)');
    const offset = cursor === undefined ? 0 : Number(cursor[1]);
    if (cursor !== undefined && (cursor[0] !== plan.trackID || offset > plan.total)) throw badRequest('cursor is not one this API gave out for this trackID');
    const page = await readLookupPage(pool, store, plan, { offset, budget: replyBudgetBytes, show: describeListedEvent });
    res.json({ ...lookupPageJson(page), nextCursor: page.next === null ? null : encodeCursorOf('track', [plan.trackID, page.next]) });
  });

  // One stored event in full: what a list left out of it (its `truncated`). At most one event's
  // bytes, which ingest bounds.
  router.get('/events/:eventId', async (req: Request, res: Response) => {
    const event = await findStoredEvent(pool, store, accountOf(res).id, req.params.eventId as string);
    if (!event) throw notFound('no stored event with this id (an accepted item is found here within about a second)');
    res.json(describeEvent(event));
  });

  router.get('/live', async (req: Request, res: Response) => {
    const kindText = stringQuery(req, 'kind');
    const kind = kindText === undefined || kindText === '' ? undefined : kindText;
    if (kind !== undefined && !isLiveKind(kind)) throw badRequest(`kind must be one of ${liveKinds.join(', ')}`);
    const after = cursorOf(req, decodeLiveCursor, 'after');
    const before = cursorOf(req, decodeLiveCursor, 'before');
    const limit = limitOf(req, { max: maxLiveLimit });
    // Exact matches: an event's name, a person's userId or anonymousId. Empty means no filter.
    const name = stringQuery(req, 'name') || undefined;
    const user = stringQuery(req, 'user') || undefined;
    res.json(await liveEvents(pool, accountOf(res).id, { kind, name, user, limit, after, before }));
  });

  router.use(activityRoutes(pool, store));
  router.use(productRoutes(pool));
  return router;
}
