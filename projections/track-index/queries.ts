import type { Pool } from '../../src/db/pool.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { repeatsOf, trackedEvents } from './sql.js';

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The stored event(s) of a trackID, read back from the event store: within `accountId` when given
 * (the read API), in any account otherwise (the operator's audit). Empty when unknown.
 */
export async function eventsOfTrackId(pool: Pool, store: EventStore, trackId: string, accountId: string | null): Promise<RecordedEvent[]> {
  if (!uuidShape.test(trackId)) return [];
  const { rows } = await pool.query<{ event_id: string; stream_name: string; stream_position: number; global_position: number }>(trackedEvents, [
    trackId.toLowerCase(),
    accountId,
  ]);
  const events: RecordedEvent[] = [];
  for (const row of rows) {
    const [event] = await store.readStream(row.stream_name, row.stream_position, 1);
    // The global position as the catch-up read gave it (what projections ordered by): a read of
    // one stream need not report it the same way on every store.
    if (event && event.id === row.event_id) events.push({ ...event, globalPosition: Number(row.global_position) });
  }
  return events;
}

/** Events shown of a stream before the first event of a trackID in it: the audit stays bounded. */
export const streamEventsBefore = 100;

/** Where one copy of an event is stored. */
export interface StoredAt {
  stream: string;
  streamPosition: number;
  globalPosition: number;
  recordedAt: string;
}

/**
 * A stored event as the audit shows it. An id the store holds more than once (EventStoreDB may,
 * docs/eventstoredb.md) is shown once, at its first copy, with `alsoStoredAt` listing the later
 * copies; a later copy met in a stream's events says which first copy it repeats (`repeatOf`).
 */
export type AuditedEvent = RecordedEvent & { alsoStoredAt?: StoredAt[]; repeatOf?: StoredAt };

export interface TrackLookup {
  trackID: string;
  /** The trackID's events, each id once. */
  events: AuditedEvent[];
  /** Each stream of the events, up to and including them, from at most `streamEventsBefore` before them. */
  streams: Map<string, AuditedEvent[]>;
}

/**
 * A trackID's stored events and, for each of their streams, the events up to and including them:
 * what the track lookup of the read API and `tracking audit` show. Null when unknown (in
 * `accountId`, when given).
 */
export async function lookUpTrackId(pool: Pool, store: EventStore, trackId: string, accountId: string | null): Promise<TrackLookup | null> {
  const events = await eventsOfTrackId(pool, store, trackId, accountId);
  if (events.length === 0) return null;
  const streams = new Map<string, RecordedEvent[]>();
  for (const stream of new Set(events.map((e) => e.stream))) {
    const positions = events.filter((e) => e.stream === stream).map((e) => e.streamPosition);
    const from = Math.max(0, Math.min(...positions) - streamEventsBefore);
    // A trackID's events in one stream are adjacent (one request appends them together); the bound
    // holds even if they were not.
    const count = Math.min(Math.max(...positions) - from + 1, streamEventsBefore + positions.length);
    streams.set(stream, await store.readStream(stream, from, count));
  }
  const ids = new Set([...events, ...[...streams.values()].flat()].map((e) => e.id));
  const mark = await repeatMarker(pool, [...ids]);
  return {
    trackID: trackId.toLowerCase(),
    events: events.map(mark),
    streams: new Map([...streams].map(([name, list]) => [name, list.map(mark)])),
  };
}

const placeKey = (stream: string, streamPosition: number): string => `${streamPosition}\u0000${stream}`;

/** Marks the copies of the ids among `ids` that the track index has seen stored more than once. */
async function repeatMarker(pool: Pool, ids: string[]): Promise<(event: RecordedEvent) => AuditedEvent> {
  const { rows } = await pool.query<{
    event_id: string;
    first_stream: string;
    first_stream_position: string;
    first_global_position: string;
    first_recorded_at: Date;
    stream_name: string;
    stream_position: string;
    global_position: string;
    recorded_at: Date;
  }>(repeatsOf, [ids]);
  const firsts = new Map<string, StoredAt>();
  const laterCopies = new Map<string, StoredAt[]>();
  const firstOfCopy = new Map<string, StoredAt>();
  for (const row of rows) {
    const first: StoredAt = {
      stream: row.first_stream,
      streamPosition: Number(row.first_stream_position),
      globalPosition: Number(row.first_global_position),
      recordedAt: row.first_recorded_at.toISOString(),
    };
    const copy: StoredAt = { stream: row.stream_name, streamPosition: Number(row.stream_position), globalPosition: Number(row.global_position), recordedAt: row.recorded_at.toISOString() };
    firsts.set(row.event_id, first);
    laterCopies.set(row.event_id, [...(laterCopies.get(row.event_id) ?? []), copy]);
    firstOfCopy.set(placeKey(copy.stream, copy.streamPosition), first);
  }
  return (event) => {
    const first = firsts.get(event.id);
    if (!first) return event;
    if (first.stream === event.stream && first.streamPosition === event.streamPosition) return { ...event, alsoStoredAt: laterCopies.get(event.id) ?? [] };
    const repeated = firstOfCopy.get(placeKey(event.stream, event.streamPosition));
    return repeated ? { ...event, repeatOf: repeated } : event;
  };
}

/** A track lookup as JSON: the read API's reply and `tracking audit --json`. */
export function describeTrackLookup(lookup: TrackLookup): Record<string, unknown> {
  return {
    trackID: lookup.trackID,
    events: lookup.events.map(describeEvent),
    streams: Object.fromEntries([...lookup.streams].map(([name, list]) => [name, list.map(describeEvent)])),
  };
}

/** A stored event as the read API and the audit show it. */
export function describeEvent(event: AuditedEvent): Record<string, unknown> {
  return {
    eventId: event.id,
    type: event.type,
    stream: event.stream,
    streamPosition: event.streamPosition,
    globalPosition: event.globalPosition,
    recordedAt: event.recordedAt,
    data: event.data,
    metadata: event.metadata,
    ...(event.alsoStoredAt && { alsoStoredAt: event.alsoStoredAt }),
    ...(event.repeatOf && { repeatOf: event.repeatOf }),
  };
}
