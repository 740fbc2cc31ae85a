import type { Pool } from '../db/pool.js';
import { inTransaction } from '../db/transaction.js';
import * as sql from './sql.js';
import type { ActivityRow, GroupRow, RejectedItemRow } from './sql.js';
import { countFitting, decodeCursorOf, encodeCursorOf } from '../../projections/reply-bytes.js';

/** Examples shown per group in the warnings. */
const examplesPerGroup = 3;
/** Groups in a reply at most (reasons by fields by endpoints: a few dozen in practice). */
const maxGroups = 200;

/** A rejected item as the warnings show it: its row, with the time as ISO text. */
export type Warning = Omit<RejectedItemRow, 'at'> & { at: string };

export interface WarningGroup {
  reason: string;
  field: string;
  endpoint: string;
  count: number;
  lastSeenAt: string;
  examples: Omit<Warning, 'reason' | 'field' | 'endpoint'>[];
}

export interface ActivityBucket {
  start: string;
  endpoint: string;
  accepted: number;
  rejected: number;
}

const iso = (at: Date | string): string => new Date(at).toISOString();

const warningOf = (row: RejectedItemRow): Warning => ({
  at: iso(row.at),
  endpoint: row.endpoint,
  reason: row.reason,
  field: row.field,
  status: row.status,
  message: row.message,
  excerpt: row.excerpt,
  truncated: row.truncated,
  client: row.client,
});

/** One account's rejections of the last 30 days, one group per reason, field and endpoint, the latest seen first. */
export async function warningGroups(pool: Pool, accountId: string): Promise<WarningGroup[]> {
  const { rows } = await pool.query<GroupRow>(sql.rejectionsByGroup, [accountId, examplesPerGroup, maxGroups]);
  return rows.map((row) => ({
    reason: row.reason,
    field: row.field,
    endpoint: row.endpoint,
    count: Number(row.count),
    lastSeenAt: iso(row.last_seen_at),
    examples: row.examples.map((example) => ({
      at: iso(example.at),
      status: example.status,
      message: example.message,
      excerpt: example.excerpt,
      truncated: example.truncated,
      client: example.client,
    })),
  }));
}

export interface WarningPage {
  warnings: Warning[];
  /** The `cursor` of the next (older) page; null at the end. */
  nextCursor: string | null;
}

/** The id a warnings cursor points before; null when it is not one of ours. */
export function decodeWarningsCursor(cursor: string): number | null {
  const parts = decodeCursorOf('warnings', cursor, ['integer']);
  return parts ? (parts[0] as number) : null;
}

/** Only the rejected items of this reason, field and endpoint (each where given). */
export interface WarningFilter {
  reason?: string;
  field?: string;
  endpoint?: string;
}

/** A page of one account's latest rejected items, newest first: at most `limit` and what fits a reply in bytes. */
export async function recentWarnings(pool: Pool, accountId: string, limit: number, before?: number, filter: WarningFilter = {}): Promise<WarningPage> {
  const { rows } = await pool.query<RejectedItemRow & { id: string }>(sql.rejectedItemsBefore, [
    accountId,
    limit + 1,
    before ?? null,
    filter.reason ?? null,
    filter.field ?? null,
    filter.endpoint ?? null,
  ]);
  const warnings = rows.slice(0, limit).map(warningOf);
  const fitting = countFitting(warnings);
  const last = rows[fitting - 1];
  return { warnings: warnings.slice(0, fitting), nextCursor: fitting < rows.length && last ? encodeCursorOf('warnings', [Number(last.id)]) : null };
}

const bucketOf = (row: ActivityRow): ActivityBucket => ({
  start: iso(row.start),
  endpoint: row.endpoint,
  accepted: Number(row.accepted),
  rejected: Number(row.rejected),
});

/**
 * One account's accepted and rejected items per minute (last 60) and per hour (last 168), oldest
 * first. Both lists are read in one snapshot: read apart, a flush committed between the two reads
 * would show in one list and not in the other.
 */
export async function activityCounts(pool: Pool, accountId: string): Promise<{ perMinute: ActivityBucket[]; perHour: ActivityBucket[] }> {
  // One after the other: a connection runs one query at a time (pg deprecates queuing a second).
  const [minutes, hours] = await inTransaction(
    pool,
    async (client) => [await client.query<ActivityRow>(sql.countsPerMinute, [accountId]), await client.query<ActivityRow>(sql.countsPerHour, [accountId])] as const,
    { begin: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' },
  );
  return { perMinute: minutes.rows.map(bucketOf), perHour: hours.rows.map(bucketOf) };
}
