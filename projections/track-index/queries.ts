import type { Pool } from '../../src/db/pool.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { trackedEvents } from './sql.js';

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

/** A stored event as the read API and the audit show it. */
export function describeEvent(event: RecordedEvent): Record<string, unknown> {
  return {
    eventId: event.id,
    type: event.type,
    stream: event.stream,
    streamPosition: event.streamPosition,
    globalPosition: event.globalPosition,
    recordedAt: event.recordedAt,
    data: event.data,
    metadata: event.metadata,
  };
}
