import type { Pool } from '../../src/db/pool.js';
import { streams } from '../../src/eventstore/events.js';
import type { Lead } from './queries.js';
import { leadTimeline } from './queries-sql.js';

/** A lead's timeline (GET .../leads/:id/timeline): what was sent for it, latest first. */

export type TimelineEntry =
  | { kind: 'profile'; at: string; trackID: string; eventType: string; userId?: string; anonymousId?: string }
  | { kind: 'event'; at: string; trackID: string; eventName: string | null; eventTime: string | null; eventData: Record<string, unknown> | null };

interface TimelineRow {
  stream_name: string;
  event_type: string;
  track_id: string;
  at: string;
  event_name: string | null;
  event_time: string | null;
  event_data: Record<string, unknown> | null;
}

/**
 * Profiles sent for the lead or for an anonymous id merged into it (UserUpserted, ProfilesMerged),
 * and its tracked events, as the track index has them; an event's details come from user_events
 * (null for one that projection has not applied yet).
 */
export async function findLeadTimeline(pool: Pool, accountId: string, lead: Lead, limit: number): Promise<TimelineEntry[]> {
  const profileOf = new Map<string, { userId: string } | { anonymousId: string }>();
  if (lead.userId !== null) profileOf.set(streams.user(accountId, lead.userId), { userId: lead.userId });
  const anonymousIds = lead.anonymousId !== null ? [lead.anonymousId] : lead.anonymousIds;
  for (const id of anonymousIds) profileOf.set(streams.anonymous(accountId, id), { anonymousId: id });
  const { rows } = await pool.query<TimelineRow>(leadTimeline, [accountId, [...profileOf.keys()], limit]);
  return rows.map((row): TimelineEntry => {
    if (row.event_type === 'EventTracked') {
      return { kind: 'event', at: row.at, trackID: row.track_id, eventName: row.event_name, eventTime: row.event_time, eventData: row.event_data };
    }
    return { kind: 'profile', at: row.at, trackID: row.track_id, eventType: row.event_type, ...profileOf.get(row.stream_name) };
  });
}
