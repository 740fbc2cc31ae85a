import type { EventType } from '../eventstore/events.js';
import { liveKindOf as kindOf, type LiveKind as ExportKind } from '../../projections/track-index/live.js';
import type { RecordedEvent } from '../eventstore/port.js';

/**
 * One stored event as an export and the feed give it (docs/export.md): opened, in the contract's
 * shape (docs/events.md), with where to resume after it. An erased person's event keeps only
 * what is not theirs: its ids of the store, type, times, product, and which erasure took it.
 */

// The kinds are those Live events filters by (the ingest endpoint of each event type; merges are `users`).
export { liveKindOf as kindOf, liveKinds as exportKinds, isLiveKind as isExportKind, type LiveKind as ExportKind } from '../../projections/track-index/live.js';

export interface ExportedEvent {
  /** Give it back as `after` to continue past this event. */
  cursor: string;
  eventId: string;
  trackID: string;
  kind: ExportKind;
  eventType: EventType;
  receivedAt: string;
  /** The event's data as docs/events.md shows it; an erased event's holds no value of the person. */
  data: Record<string, unknown>;
  /** Where a Segment message came from (docs/segment.md); absent otherwise. */
  source?: unknown;
  /** Which erasure took this event's person, and when; null for an event that is readable. */
  erased: { erasureId: string | null; erasedAt: string | null } | null;
}

/** The pseudonyms an erased event keeps in place of its ids link its person's events: never given out. */
const pseudonymFields = ['userRef', 'anonymousRef'];

export function exportedEvent(event: RecordedEvent, cursor: string): ExportedEvent {
  let data = event.data as Record<string, unknown>;
  if (pseudonymFields.some((field) => field in data)) {
    data = { ...data };
    for (const field of pseudonymFields) delete data[field];
  }
  return {
    cursor,
    eventId: event.id,
    trackID: event.metadata.trackId,
    kind: kindOf[event.type],
    eventType: event.type,
    receivedAt: event.metadata.receivedAt,
    data,
    ...(event.metadata.source !== undefined && { source: event.metadata.source }),
    erased: event.erased ?? null,
  };
}

/**
 * The person an event is of, as Live events' filter names them: its userId, else its anonymousId
 * (null on an erased event, and on a product sent without a user).
 */
export function personOf(data: Record<string, unknown>): string | null {
  if (typeof data.userId === 'string') return data.userId;
  return typeof data.anonymousId === 'string' ? data.anonymousId : null;
}

/** The event's own time: the instant it was sent with, else when it was received. */
export function eventTimeOf(event: ExportedEvent): string {
  const utc = event.data.eventTimeUtc;
  return typeof utc === 'string' ? utc : event.receivedAt;
}
