import type { Pool } from '../../src/db/pool.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { jsonBytes, shownPayload, truncatedField, type Truncations } from '../reply-bytes.js';
import { eventOfAccount, repeatsOf, trackedEvents } from './sql.js';

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Events shown of a stream before the first event of a trackID in it: the audit stays bounded. */
export const streamEventsBefore = 100;

/** Events a page of a track lookup holds at most, however small: each is one read of the store. */
export const maxLookupPageEvents = 500;

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

/** Where the events of a lookup are: found in the track index, without reading the store. */
export interface LookupPlan {
  trackID: string;
  /** The trackID's events as the index has them, oldest first. */
  events: { eventId: string; stream: string; streamPosition: number; globalPosition: number }[];
  /** Each stream of the events, up to and including them, from at most `streamEventsBefore` before them. */
  streams: { stream: string; from: number; count: number }[];
  /** Entries of the lookup in all: the trackID's events, then each stream's. */
  total: number;
}

/**
 * Where a trackID's stored events are, within `accountId` when given (the read API), in any
 * account otherwise (the operator's audit); null when unknown.
 */
export async function planTrackLookup(pool: Pool, trackId: string, accountId: string | null): Promise<LookupPlan | null> {
  if (!uuidShape.test(trackId)) return null;
  const { rows } = await pool.query<{ event_id: string; stream_name: string; stream_position: number; global_position: number }>(trackedEvents, [
    trackId.toLowerCase(),
    accountId,
  ]);
  if (rows.length === 0) return null;
  const events = rows.map((r) => ({ eventId: r.event_id, stream: r.stream_name, streamPosition: Number(r.stream_position), globalPosition: Number(r.global_position) }));
  const streams = [...new Set(events.map((e) => e.stream))].map((stream) => {
    const positions = events.filter((e) => e.stream === stream).map((e) => e.streamPosition);
    const from = Math.max(0, Math.min(...positions) - streamEventsBefore);
    // A trackID's events in one stream are adjacent (one request appends them together); the bound
    // holds even if they were not.
    return { stream, from, count: Math.min(Math.max(...positions) - from + 1, streamEventsBefore + positions.length) };
  });
  return { trackID: trackId.toLowerCase(), events, streams, total: events.length + streams.reduce((n, s) => n + s.count, 0) };
}

/** A page of a lookup: what `show` made of its events, and the offset of the next (null at the end). */
export interface LookupPage<Shown> {
  trackID: string;
  events: Shown[];
  streams: Map<string, Shown[]>;
  next: number | null;
}

export interface PageOptions<Shown> {
  /** Entries of the lookup already given out (0: the first page). */
  offset: number;
  /** Bytes of what `show` makes (as JSON) a page holds at most, past its first entry. */
  budget: number;
  show: (event: AuditedEvent) => Shown;
}

/** The event of a lookup entry: read from the store one at a time, so that no more than one is held unshown. */
async function readEntry(store: EventStore, plan: LookupPlan, index: number): Promise<{ stream: string | null; event: RecordedEvent | null }> {
  const own = plan.events[index];
  if (own) {
    const [event] = await store.readStream(own.stream, own.streamPosition, 1);
    // The global position as the catch-up read gave it (what projections ordered by): a read of
    // one stream need not report it the same way on every store.
    return { stream: null, event: event && event.id === own.eventId ? { ...event, globalPosition: own.globalPosition } : null };
  }
  let at = index - plan.events.length;
  for (const part of plan.streams) {
    if (at < part.count) {
      const [event] = await store.readStream(part.stream, part.from + at, 1);
      return { stream: part.stream, event: event ?? null };
    }
    at -= part.count;
  }
  return { stream: null, event: null };
}

/**
 * A page of a trackID's lookup from `offset`: its events, one read at a time, each shown as
 * `show` makes it, while they fit `budget` bytes (at least one) and maxLookupPageEvents.
 */
export async function readLookupPage<Shown>(pool: Pool, store: EventStore, plan: LookupPlan, options: PageOptions<Shown>): Promise<LookupPage<Shown>> {
  // Only what `show` makes of an event is kept: the event itself (up to about 1 MiB) goes at once.
  const shown: { index: number; stream: string | null; shown: Shown }[] = [];
  let index = options.offset;
  let bytes = 0;
  for (; index < plan.total && shown.length < maxLookupPageEvents; index += 1) {
    const { stream, event } = await readEntry(store, plan, index);
    if (!event) continue;
    const mark = await repeatMarker(pool, [event.id]);
    const entry = options.show(mark(event));
    const size = jsonBytes(entry) + 1;
    if (shown.length > 0 && bytes + size > options.budget) break;
    bytes += size;
    shown.push({ index, stream, shown: entry });
  }
  const page: LookupPage<Shown> = { trackID: plan.trackID, events: [], streams: new Map(), next: index < plan.total ? index : null };
  for (const { stream, shown: entry } of shown) {
    if (stream === null) page.events.push(entry);
    else page.streams.set(stream, [...(page.streams.get(stream) ?? []), entry]);
  }
  return page;
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

/** A stored event in full, as the read API and the audit show it. */
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
    // The person was erased: the personal fields of `data` are empty, and this says by what.
    ...(event.erased && { erasedBy: event.erased }),
  };
}

/** A stored event as a list shows it: its data and metadata only when small (docs/api.md, Read replies bounded in bytes). */
export function describeListedEvent(event: AuditedEvent): Record<string, unknown> {
  const truncations: Truncations = {};
  const data = shownPayload(event.data, 'data', truncations);
  const metadata = shownPayload(event.metadata, 'metadata', truncations);
  return { ...describeEvent(event), data, metadata, ...truncatedField(truncations) };
}

/** A page of a lookup as JSON: `streams` as an object. */
export function lookupPageJson<Shown>(page: LookupPage<Shown>): { trackID: string; events: Shown[]; streams: Record<string, Shown[]> } {
  return { trackID: page.trackID, events: page.events, streams: Object.fromEntries(page.streams) };
}

/** One stored event of `accountId` by its id, in full; null when unknown there (or not yet indexed). */
export async function findStoredEvent(pool: Pool, store: EventStore, accountId: string, eventId: string): Promise<AuditedEvent | null> {
  if (!uuidShape.test(eventId)) return null;
  const { rows } = await pool.query<{ stream_name: string; stream_position: number; global_position: number }>(eventOfAccount, [eventId.toLowerCase(), accountId]);
  const row = rows[0];
  if (!row) return null;
  const [event] = await store.readStream(row.stream_name, Number(row.stream_position), 1);
  if (!event || event.id !== eventId.toLowerCase()) return null;
  const mark = await repeatMarker(pool, [event.id]);
  return mark({ ...event, globalPosition: Number(row.global_position) });
}
