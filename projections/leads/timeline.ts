import type { Pool } from '../../src/db/pool.js';
import { streams, type AccountRefs } from '../../src/eventstore/events.js';
import type { ErasedMark, EventStore } from '../../src/eventstore/port.js';
import type { Lead } from './queries.js';
import { countFitting, decodeCursorOf, encodeCursorOf, payloadOf, truncatedField, type Truncations } from '../reply-bytes.js';
import { leadTimeline, mergedAnonymousRefs } from './queries-sql.js';
import { erasedAmong } from './timeline-erased.js';

/**
 * A lead's timeline (GET .../leads/:id/timeline): what was sent for it, latest first. An entry of
 * an erased person (an anonymous id merged into the lead and erased alone) stays, with `erasedBy`
 * and nothing the person sent: no id, name or data.
 */

export type TimelineEntry =
  | { kind: 'profile'; at: string; eventId: string; trackID: string; eventType: string; userId?: string; anonymousId?: string; erasedBy?: ErasedMark }
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
      erasedBy?: ErasedMark;
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
  stream_position: string;
  event_type: string;
  /** The anonymousId the track index has of the event (null when erased). */
  anonymous_id: string | null;
  track_id: string;
  at: string;
  event_name: string | null;
  event_time: string | null;
  event_time_utc: string | null;
  unnamed: boolean;
}

/**
 * Profiles sent for the lead or for an anonymous id merged into it (UserUpserted, ProfilesMerged),
 * and its tracked events, as the track index has them; an event's details come from user_events
 * (null for one that projection has not applied yet). The merged anonymous ids are those of the
 * lead and those the identity map holds, which keeps them also once erased. Whether an event the
 * index names nobody in is erased, and by what, the store says.
 */
export async function findLeadTimeline(pool: Pool, store: EventStore, refs: AccountRefs, lead: Lead, limit: number, before?: number): Promise<TimelinePage> {
  const { accountId } = refs;
  // The profile each stream is of; null: an anonymous id's, known by its pseudonym only.
  const profileOf = new Map<string, { userId: string } | { anonymousId: string } | null>();
  const anonymousIds = lead.anonymousId !== null ? [lead.anonymousId] : lead.anonymousIds;
  for (const id of anonymousIds) profileOf.set(streams.anonymous(accountId, refs.anonymous(id)), { anonymousId: id });
  if (lead.userId !== null) {
    const userRef = refs.user(lead.userId);
    profileOf.set(streams.user(accountId, userRef), { userId: lead.userId });
    const merged = await pool.query<{ anonymous_ref: string }>(mergedAnonymousRefs, [accountId, userRef]);
    for (const { anonymous_ref: ref } of merged.rows) {
      const stream = streams.anonymous(accountId, ref);
      if (!profileOf.has(stream)) profileOf.set(stream, null);
    }
  }
  const { rows } = await pool.query<TimelineRow>(leadTimeline, [accountId, [...profileOf.keys()], limit + 1, before ?? null]);
  const page = rows.slice(0, limit);
  const unnamed = page.filter((row) => row.unnamed).map((row) => ({ eventId: row.event_id, stream: row.stream_name, streamPosition: Number(row.stream_position) }));
  const erased = unnamed.length > 0 ? await erasedAmong(store, unnamed) : new Map();
  const entries = page.map((row): TimelineEntry => {
    const common = { at: row.at, eventId: row.event_id, trackID: row.track_id };
    const gone = erased.get(row.event_id);
    if (gone) {
      if (row.event_type !== 'EventTracked') return { kind: 'profile', ...common, eventType: row.event_type, erasedBy: gone.erasedBy };
      return { kind: 'event', ...common, eventName: null, eventTime: null, eventTimeUtc: gone.eventTimeUtc, eventData: null, erasedBy: gone.erasedBy };
    }
    if (row.event_type === 'EventTracked') {
      const truncations: Truncations = {};
      const eventData = payloadOf<Record<string, unknown>>(row, 'event_data', 'eventData', truncations);
      return { kind: 'event', ...common, eventName: row.event_name, eventTime: row.event_time, eventTimeUtc: row.event_time_utc, eventData, ...truncatedField(truncations) };
    }
    const profile = profileOf.get(row.stream_name) ?? (row.anonymous_id !== null ? { anonymousId: row.anonymous_id } : {});
    return { kind: 'profile', ...common, eventType: row.event_type, ...profile };
  });
  const fitting = countFitting(entries);
  const last = rows[fitting - 1];
  return {
    entries: entries.slice(0, fitting),
    nextCursor: fitting < rows.length && last ? encodeCursorOf('timeline', [Number(last.global_position)]) : null,
  };
}
