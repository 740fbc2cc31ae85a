import type { Pool } from '../../src/db/pool.js';
import { countFitting, decodeCursorOf, encodeCursorOf, payloadOf, truncatedField, type Truncations } from '../reply-bytes.js';
import { attributeCandidates, type AttributeFilter } from './attribute-filter.js';
import { countLeads, type LeadTotal } from './count.js';
import { leadEvents, leadSystemAttributes, listLeadsSql, oneLead, type ListShape } from './queries-sql.js';

/** Read queries on the leads model (docs/api.md, Leads). */

type LeadRecord = Record<string, unknown> & {
  profile_kind: string;
  profile_id: string;
  created_position: number;
};

/** What a lead shows in full also in a list. */
interface LeadFields {
  userId: string | null;
  anonymousId: string | null;
  firstName: string | null;
  lastName: string | null;
  mergedInto: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
  [systemAttribute: string]: unknown;
}

export interface Lead extends LeadFields {
  anonymousIds: string[];
  attributes: Record<string, unknown>;
  attributeTypes: Record<string, string>;
}

/** A lead as a list shows it: its large fields may be null, `truncated` saying so (docs/api.md). */
export interface ListedLead extends LeadFields {
  anonymousIds: string[] | null;
  attributes: Record<string, unknown> | null;
  attributeTypes: Record<string, string> | null;
  truncated?: Truncations;
}

function toLead(row: LeadRecord): Lead {
  return { ...toListedLead(row), anonymousIds: row.anonymous_ids as string[], attributes: row.attributes as Record<string, unknown>, attributeTypes: row.attribute_types as Record<string, string> };
}

/** A row of listLeadsSql: its large columns are there only when small (payloadColumns). */
function toListedLead(row: LeadRecord): ListedLead {
  const system: Record<string, unknown> = {};
  for (const name of leadSystemAttributes) system[name] = row[name];
  const truncations: Truncations = {};
  return {
    userId: row.user_id as string | null,
    anonymousId: row.anonymous_id as string | null,
    anonymousIds: payloadOf<string[]>(row, 'anonymous_ids', 'anonymousIds', truncations),
    firstName: row.first_name as string | null,
    lastName: row.last_name as string | null,
    ...system,
    attributes: payloadOf<Record<string, unknown>>(row, 'attributes', 'attributes', truncations),
    attributeTypes: payloadOf<Record<string, string>>(row, 'attribute_types', 'attributeTypes', truncations),
    mergedInto: row.merged_into as string | null,
    createdAt: row.created_at as string,
    updatedAt: row.changed_at as string,
    version: row.version as number,
    ...truncatedField(truncations),
  };
}

/** The first rows of `rows` that fit a reply (countFitting), as leads, and the cursor after them when any are left. */
function leadPageOf(rows: LeadRecord[], limit: number, moreAfter: LeadRecord | undefined): LeadPage {
  const listed = rows.slice(0, limit).map(toListedLead);
  const fitting = countFitting(listed);
  // Rows left unshown go on after the last shown; else the walk's end, when it stopped short of the list's.
  const after = fitting < rows.length ? rows[fitting - 1] : moreAfter;
  return { leads: listed.slice(0, fitting), nextCursor: after ? encodeCursor(after) : null };
}

export interface LeadPage {
  leads: ListedLead[];
  nextCursor: string | null;
}

interface Cursor {
  position: number;
  kind: string;
  id: string;
}

function encodeCursor(row: LeadRecord): string {
  return Buffer.from(JSON.stringify([row.created_position, row.profile_kind, row.profile_id])).toString('base64url');
}

/** The position a cursor points after; null when it is not one of ours. */
export function decodeCursor(cursor: string): Cursor | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== 3) return null;
    const [position, kind, id] = value as unknown[];
    if (!Number.isSafeInteger(position) || typeof kind !== 'string' || typeof id !== 'string') return null;
    return { position: position as number, kind, id };
  } catch {
    return null;
  }
}

/**
 * `q` as a case-insensitive substring pattern over leads.search_text (lowercased by the projection),
 * with LIKE's wildcards taken literally; a pattern never spans two fields (one per line).
 */
const containsPattern = (q: string): string => `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export type LeadKind = 'known' | 'anonymous';

/**
 * Rows of the list a search walks in order before it looks the term up in the trigram index
 * instead: a common term fills a page within it, a rarer one is found faster by the index.
 */
export const searchBudget = 5000;

/**
 * A term shorter than a trigram has none for the index to find it by: its search walks the list
 * only, at most this many rows a request, so that a rare short term never reads the account's
 * every lead in one request. A page it leaves short comes with the cursor of the last row walked.
 */
export const shortSearchBudget = 50_000;
const trigramLength = 3;

type WalkedRow = LeadRecord & { matches: boolean; scanned: string };

export interface LeadListOptions {
  q?: string;
  kind?: LeadKind;
  attribute?: AttributeFilter;
  limit: number;
  cursor?: Cursor;
  /** How long the total is counted exactly at most (count.ts). */
  exactCountMs: number;
}

/** A page of the leads list and the list's total (count.ts). */
export async function findLeads(pool: Pool, accountId: string, options: LeadListOptions): Promise<LeadPage & { total: LeadTotal }> {
  const term = options.q?.trim() ?? '';
  const q = term !== '' ? containsPattern(term) : null;
  const kind = options.kind ? [options.kind === 'known' ? 'user' : 'anonymous'] : [];
  const candidates = options.attribute ? attributeCandidates(accountId, kind.length ? kind : ['user', 'anonymous'], options.attribute) : null;
  const filters = { kind: kind.length > 0, pattern: q !== null, attribute: candidates !== null };
  const matchValues = [...(q !== null ? [q] : []), ...(candidates !== null ? [candidates] : [])];
  const [page, total] = await Promise.all([
    pageOfLeads(pool, { ...filters, cursor: options.cursor !== undefined }, [accountId, options.limit + 1, ...kind], matchValues, term, options),
    countLeads(pool, filters, accountId, [...kind, ...matchValues], options.exactCountMs),
  ]);
  // A first page with nothing after it holds the whole list: its length is the count, however long counting took.
  if (!total.exact && options.cursor === undefined && page.nextCursor === null) return { ...page, total: { count: page.leads.length, exact: true } };
  return { ...page, total };
}

async function pageOfLeads(
  pool: Pool,
  shape: Omit<ListShape, 'walk'>,
  head: unknown[],
  matchValues: unknown[],
  term: string,
  options: LeadListOptions,
): Promise<LeadPage> {
  const c = options.cursor;
  const values = [...head, ...(c ? [c.position, c.kind, c.id] : []), ...matchValues];
  const walk = async (budget: number): Promise<{ matches: LeadRecord[]; end: WalkedRow | undefined }> => {
    const walked = (await pool.query<WalkedRow>(listLeadsSql({ ...shape, walk: 'budgeted' }), [...values, budget])).rows;
    // The budget's last row comes back when the walk reached it: the list goes on past it.
    return { matches: walked.filter((r) => r.matches), end: walked.find((r) => Number(r.scanned) === budget) };
  };
  let rows: LeadRecord[];
  if (matchValues.length === 0) {
    rows = (await pool.query<LeadRecord>(listLeadsSql({ ...shape, walk: 'list' }), values)).rows;
  } else if (!shape.attribute && [...term].length < trigramLength) {
    // No index can find the term: the walk only.
    const { matches, end } = await walk(shortSearchBudget);
    if (matches.length <= options.limit && end) return leadPageOf(matches, options.limit, end);
    rows = matches;
  } else {
    const { matches, end } = await walk(searchBudget);
    rows = matches;
    // The budget ran out before a page was full: the rest by the indexes.
    if (rows.length <= options.limit && end) {
      rows = (await pool.query<LeadRecord>(listLeadsSql({ ...shape, walk: 'unordered' }), values)).rows;
    }
  }
  return leadPageOf(rows, options.limit, undefined);
}

export async function findLead(pool: Pool, accountId: string, id: string): Promise<Lead | null> {
  const { rows } = await pool.query<LeadRecord>(oneLead, [accountId, id]);
  return rows[0] ? toLead(rows[0]) : null;
}

export interface TimelineEvent {
  eventId: string;
  userId: string | null;
  anonymousId: string | null;
  eventName: string;
  eventTime: string | null;
  eventTimeUtc: string;
  /** Null when larger than a list shows: `truncated.eventData` says so. */
  eventData: Record<string, unknown> | null;
  receivedAt: string;
  trackID: string | null;
  truncated?: Truncations;
}

export interface LeadEventPage {
  events: TimelineEvent[];
  /** The `cursor` of the next page; null at the end. */
  nextCursor: string | null;
}

/** Where a page of a lead's events starts: after this event time and global position. */
export interface LeadEventsCursor {
  eventTimeUtc: string;
  globalPosition: number;
}

/** The position a lead events cursor points after; null when it is not one of ours. */
export function decodeLeadEventsCursor(cursor: string): LeadEventsCursor | null {
  const parts = decodeCursorOf('lead-events', cursor, ['string', 'integer']);
  if (!parts || Number.isNaN(Date.parse(parts[0] as string))) return null;
  return { eventTimeUtc: parts[0] as string, globalPosition: parts[1] as number };
}

/** A page of a lead's events, latest first: at most `limit` and what fits a reply in bytes. */
export async function findLeadEvents(pool: Pool, accountId: string, lead: Lead, limit: number, cursor?: LeadEventsCursor): Promise<LeadEventPage> {
  const anonymousIds = lead.anonymousId !== null ? [lead.anonymousId] : lead.anonymousIds;
  const { rows } = await pool.query<Record<string, unknown>>(leadEvents, [
    accountId,
    lead.userId,
    anonymousIds,
    limit + 1,
    cursor?.eventTimeUtc ?? null,
    cursor?.globalPosition ?? null,
  ]);
  const events = rows.slice(0, limit).map((row): TimelineEvent => {
    const truncations: Truncations = {};
    return {
      eventId: row.event_id as string,
      userId: row.user_id as string | null,
      anonymousId: row.anonymous_id as string | null,
      eventName: row.event_name as string,
      eventTime: row.event_time as string | null,
      eventTimeUtc: row.event_time_utc as string,
      eventData: payloadOf<Record<string, unknown>>(row, 'event_data', 'eventData', truncations),
      receivedAt: row.received_at as string,
      trackID: row.track_id as string | null,
      ...truncatedField(truncations),
    };
  });
  const fitting = countFitting(events);
  const last = rows[fitting - 1];
  const more = fitting < rows.length && last !== undefined;
  return {
    events: events.slice(0, fitting),
    nextCursor: more ? encodeCursorOf('lead-events', [last.event_time_utc as string, Number(last.global_position)]) : null,
  };
}
