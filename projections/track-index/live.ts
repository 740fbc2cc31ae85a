import type { Pool } from '../../src/db/pool.js';
import type { EventType } from '../../src/eventstore/events.js';
import { countFitting } from '../reply-bytes.js';
import { latestOfAccount } from './sql.js';

/** The ingest endpoint family each event type comes from (bulk users are `users`). */
export const liveKindOf = {
  UserUpserted: 'users',
  ProfilesMerged: 'users',
  EventTracked: 'events',
  ProductSubmitted: 'products',
  ProductEventTracked: 'productsevents',
} as const satisfies Record<EventType, string>;

export type LiveKind = (typeof liveKindOf)[EventType];

export const liveKinds: readonly LiveKind[] = ['users', 'events', 'products', 'productsevents'];

export const isLiveKind = (kind: string): kind is LiveKind => (liveKinds as readonly string[]).includes(kind);

const typesOfKind = (kind: LiveKind): EventType[] => (Object.keys(liveKindOf) as EventType[]).filter((type) => liveKindOf[type] === kind);

export interface LiveItem {
  trackID: string;
  kind: LiveKind;
  eventType: string;
  /** The eventName of an event or product event; null for profiles, merges and products. */
  name: string | null;
  userId: string | null;
  anonymousId: string | null;
  productId: string | null;
  /** The start of the payload as JSON text (eventData, properties, or the profile's fields), cut with '…'. */
  preview: string | null;
  receivedAt: string;
  stream: string;
  globalPosition: number;
}

/** The list narrowed: by kind, by an event name, by a person (their userId or anonymousId). */
export interface LiveFilter {
  kind?: LiveKind;
  name?: string;
  user?: string;
}

export interface LivePage {
  items: LiveItem[];
  /** Give it back as `after` for the items newer than these. */
  cursor: string;
  /** Give it back as `before` for the items older than these; null when there are none. */
  olderCursor: string | null;
}

/**
 * A cursor is the track index's write order (indexed_order), not a global position: an event of a
 * lower global position can be indexed after a higher one. Opaque to clients so that it can change.
 */
const encodeCursor = (position: bigint): string => Buffer.from(`live:${position}`).toString('base64url');

/** The write order of a cursor this API gave out; null for anything else. */
export function decodeLiveCursor(cursor: string): bigint | null {
  if (cursor.length > 64) return null;
  const match = /^live:(\d{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) return null;
  const position = BigInt(match[1] as string);
  return position <= 9223372036854775807n ? position : null;
}

/**
 * The account's latest stored events in the order the track index wrote them, latest first; with
 * `after`, only those indexed after it (the latest `limit` of them when there are more); with
 * `before`, only those indexed before it. At most what fits a reply in bytes (countFitting).
 */
export async function liveEvents(pool: Pool, accountId: string, options: LiveFilter & { limit: number; after?: bigint; before?: bigint }): Promise<LivePage> {
  const { rows } = await pool.query<{
    track_id: string;
    event_type: EventType;
    stream_name: string;
    global_position: number;
    recorded_at: Date;
    indexed_order: string;
    item_name: string | null;
    user_id: string | null;
    anonymous_id: string | null;
    product_id: string | null;
    preview: string | null;
  }>(latestOfAccount, [
    accountId,
    options.limit + 1,
    options.after?.toString() ?? null,
    options.kind ? typesOfKind(options.kind) : null,
    options.before?.toString() ?? null,
    options.name ?? null,
    options.user ?? null,
  ]);
  const newest = rows[0] ? BigInt(rows[0].indexed_order) : (options.after ?? 0n);
  const items = rows.slice(0, options.limit).map((row) => ({
      trackID: row.track_id,
      kind: liveKindOf[row.event_type],
      eventType: row.event_type,
      name: row.item_name,
      userId: row.user_id,
      anonymousId: row.anonymous_id,
      productId: row.product_id,
      preview: row.preview,
      // When the store recorded it: shortly after its receipt, before the item was acknowledged.
      receivedAt: row.recorded_at.toISOString(),
      stream: row.stream_name,
      globalPosition: Number(row.global_position),
  }));
  const fitting = countFitting(items);
  const oldest = rows[fitting - 1];
  return {
    items: items.slice(0, fitting),
    cursor: encodeCursor(newest),
    olderCursor: fitting < rows.length && oldest ? encodeCursor(BigInt(oldest.indexed_order)) : null,
  };
}
