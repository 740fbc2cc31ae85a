/** Positions and recorded events of the EventStoreDB adapter. */

import type { Position, RecordedEvent as EsdbRecordedEvent } from '@eventstore/db-client';
import { fromStored } from './events.js';
import { eventTypes, type RecordedEvent } from './port.js';

/** Matches exactly the service's event types: the only events of `$all` the adapter reads. */
export const storedEventTypesRegex = `^(${eventTypes.join('|')})$`;

/** A checkpoint of the EventStoreDB adapter: `<commit>/<prepare>` of the last event read. */
export function encodePosition(position: Position): string {
  return `${position.commit}/${position.prepare}`;
}

export function decodePosition(checkpoint: string): Position {
  const match = /^(\d+)\/(\d+)$/.exec(checkpoint);
  if (!match) throw new Error(`not an EventStoreDB checkpoint: ${checkpoint} (a checkpoint of another event store? rebuild the projections)`);
  return { commit: BigInt(match[1] as string), prepare: BigInt(match[2] as string) };
}

/**
 * A recorded event of `$all` in the port's shape. Its global position is the prepare position:
 * unique and increasing in `$all` order (the server reads each event back with commit = prepare =
 * its own position; the prepare part is the one that is unique whatever the log format).
 */
export function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    ...fromStored({ type: event.type, data: jsonObject(event.isJson ? event.data : {}), metadata: jsonObject(event.metadata ?? {}) }),
    id: event.id,
    stream: event.streamId,
    streamPosition: Number(event.revision),
    globalPosition: event.position ? Number(event.position.prepare) : -1,
    recordedAt: event.created.toISOString(),
  };
}

/** The service writes JSON objects as data and metadata; anything else reads as an empty object. */
function jsonObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
