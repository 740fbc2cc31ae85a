import type { Pool } from '../../src/db/pool.js';
import { streams } from '../../src/eventstore/events.js';
import type { Lead } from './queries.js';
import { countFitting, decodeCursorOf, encodeCursorOf, payloadOf, truncatedField, type Truncations } from '../reply-bytes.js';
import { leadTimeline } from './queries-sql.js';

/** A lead's timeline (GET .../leads/:id/timeline): what was sent for it, latest first. */

export type TimelineEntry =
  | { kind: 'profile'; at: string; eventId: string; trackID: string; eventType: string; userId?: string; anonymousId?: string }
  | {
      kind: 'event';
      at: string;
      eventId: string;
      trackID: string;
      eventName: string | null;
      /** As sent (zone-less forms are read as UTC): show eventTimeUtc, the instant. */
      eventTime: string | null;
      /** The UTC instant of eventTime (the receipt when none was sent); null until user-events has the event. */
      eventTimeUtc: string | null;
      /** Null also when larger than a list shows: `truncated.eventData` says so. */
      eventData: Record<string, unknown> | null;
      truncated?: Truncations;
    };

export interface TimelinePage {
  entries: TimelineEntry[];
  /** The `cursor` of the next page; null at the end. */
  nextCursor: string | null;
}

/** The global position a timeline cursor points before; null when it is not one of ours. */
export function decodeTimelineCursor(cursor: string): number | null {
  const parts = decodeCursorOf('timeline', cursor, ['integer']);
  return parts ? (parts[0] as number) : null;
}

interface TimelineRow extends Record<string, unknown> {
  event_id: string;
  global_position: string;
  stream_name: string;
  event_type: string;
  track_id: string;
  at: string;
  event_name: string | null;
  event_time: string | null;
  event_time_utc: string | null;
}

/**
 * Profiles sent for the lead or for an anonymous id merged into it (UserUpserted, ProfilesMerged),
 * and its tracked events, as the track index has them; an event's details come from user_events
 * (null for one that projection has not applied yet).
 */
export async function findLeadTimeline(pool: Pool, accountId: string, lead: Lead, limit: number, before?: number): Promise<TimelinePage> {
  const profileOf = new Map<string, { userId: string } | { anonymousId: string }>();
  if (lead.userId !== null) profileOf.set(streams.user(accountId, lead.userId), { userId: lead.userId });
  const anonymousIds = lead.anonymousId !== null ? [lead.anonymousId] : lead.anonymousIds;
  for (const id of anonymousIds) profileOf.set(streams.anonymous(accountId, id), { anonymousId: id });
  const { rows } = await pool.query<TimelineRow>(leadTimeline, [accountId, [...profileOf.keys()], limit + 1, before ?? null]);
  const entries = rows.slice(0, limit).map((row): TimelineEntry => {
    const common = { at: row.at, eventId: row.event_id, trackID: row.track_id };
    if (row.event_type === 'EventTracked') {
      const truncations: Truncations = {};
      const eventData = payloadOf<Record<string, unknown>>(row, 'event_data', 'eventData', truncations);
      return { kind: 'event', ...common, eventName: row.event_name, eventTime: row.event_time, eventTimeUtc: row.event_time_utc, eventData, ...truncatedField(truncations) };
    }
    return { kind: 'profile', ...common, eventType: row.event_type, ...profileOf.get(row.stream_name) };
  });
  const fitting = countFitting(entries);
  const last = rows[fitting - 1];
  return {
    entries: entries.slice(0, fitting),
    nextCursor: fitting < rows.length && last ? encodeCursorOf('timeline', [Number(last.global_position)]) : null,
  };
}
