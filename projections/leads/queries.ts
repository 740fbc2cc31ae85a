import type { Pool } from '../../src/db/pool.js';
import { leadEvents, leadSystemAttributes, listLeadsSql, oneLead } from './queries-sql.js';

/** Read queries on the leads model (docs/api.md, Leads). */

type LeadRecord = Record<string, unknown> & {
  profile_kind: string;
  profile_id: string;
  created_position: number;
};

export interface Lead {
  userId: string | null;
  anonymousId: string | null;
  anonymousIds: string[];
  firstName: string | null;
  lastName: string | null;
  attributes: Record<string, unknown>;
  attributeTypes: Record<string, string>;
  mergedInto: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
  [systemAttribute: string]: unknown;
}

function toLead(row: LeadRecord): Lead {
  const system: Record<string, unknown> = {};
  for (const name of leadSystemAttributes) system[name] = row[name];
  return {
    userId: row.user_id as string | null,
    anonymousId: row.anonymous_id as string | null,
    anonymousIds: row.anonymous_ids as string[],
    firstName: row.first_name as string | null,
    lastName: row.last_name as string | null,
    ...system,
    attributes: row.attributes as Record<string, unknown>,
    attributeTypes: row.attribute_types as Record<string, string>,
    mergedInto: row.merged_into as string | null,
    createdAt: row.created_at as string,
    updatedAt: row.changed_at as string,
    version: row.version as number,
  };
}

export interface LeadPage {
  leads: Lead[];
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

export async function findLeads(
  pool: Pool,
  accountId: string,
  options: { q?: string; kind?: LeadKind; limit: number; cursor?: Cursor },
): Promise<LeadPage> {
  const term = options.q?.trim() ?? '';
  const q = term !== '' ? containsPattern(term) : null;
  const c = options.cursor;
  const values: unknown[] = [accountId, options.limit + 1];
  if (options.kind) values.push(options.kind === 'known' ? 'user' : 'anonymous');
  if (c) values.push(c.position, c.kind, c.id);
  const shape = { kind: options.kind !== undefined, cursor: c !== undefined };
  const walk = async (budget: number): Promise<{ matches: LeadRecord[]; end: WalkedRow | undefined }> => {
    const walked = (await pool.query<WalkedRow>(listLeadsSql({ ...shape, search: 'budgeted' }), [...values, q, budget])).rows;
    // The budget's last row comes back when the walk reached it: the list goes on past it.
    return { matches: walked.filter((r) => r.matches), end: walked.find((r) => Number(r.scanned) === budget) };
  };
  let rows: LeadRecord[];
  if (q === null) {
    rows = (await pool.query<LeadRecord>(listLeadsSql({ ...shape, search: 'none' }), values)).rows;
  } else if ([...term].length < trigramLength) {
    const { matches, end } = await walk(shortSearchBudget);
    if (matches.length <= options.limit && end) return { leads: matches.map(toLead), nextCursor: encodeCursor(end) };
    rows = matches;
  } else {
    const { matches, end } = await walk(searchBudget);
    rows = matches;
    // The budget ran out before a page was full: the rest by the index.
    if (rows.length <= options.limit && end) {
      rows = (await pool.query<LeadRecord>(listLeadsSql({ ...shape, search: 'unordered' }), [...values, q])).rows;
    }
  }
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  return { leads: page.map(toLead), nextCursor: rows.length > options.limit && last ? encodeCursor(last) : null };
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
  eventData: Record<string, unknown>;
  receivedAt: string;
  trackID: string | null;
}

export async function findLeadEvents(pool: Pool, accountId: string, lead: Lead, limit: number): Promise<TimelineEvent[]> {
  const anonymousIds = lead.anonymousId !== null ? [lead.anonymousId] : lead.anonymousIds;
  const { rows } = await pool.query<Record<string, unknown>>(leadEvents, [accountId, lead.userId, anonymousIds, limit]);
  return rows.map((row) => ({
    eventId: row.event_id as string,
    userId: row.user_id as string | null,
    anonymousId: row.anonymous_id as string | null,
    eventName: row.event_name as string,
    eventTime: row.event_time as string | null,
    eventTimeUtc: row.event_time_utc as string,
    eventData: row.event_data as Record<string, unknown>,
    receivedAt: row.received_at as string,
    trackID: row.track_id as string | null,
  }));
}
