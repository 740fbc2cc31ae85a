import type { NewEvent } from './port.js';
import { EventsTooLargeError } from './too-large.js';

/** Counted for each event beyond what the server counts: its 16-byte id, a margin. */
const marginBytes = 16;

/**
 * What an event weighs in a write, measured as the server does (KurrentDB Event.SizeOnDisk: the
 * bytes of its data and of its metadata, and its type's UTF-16 code units twice) on the JSON text
 * the client sends (`JSON.stringify` of data and metadata, as UTF-8). Counted a little high, never
 * low: the type's UTF-8 bytes twice (at least its UTF-16 units), and the id on top.
 */
export function eventWriteBytes(event: Pick<NewEvent, 'type' | 'data' | 'metadata'>): number {
  return (
    Buffer.byteLength(JSON.stringify(event.data)) +
    Buffer.byteLength(JSON.stringify(event.metadata)) +
    2 * Buffer.byteLength(event.type) +
    marginBytes
  );
}

/** One write: events of one stream, stored atomically. */
export interface PlannedWrite {
  readonly stream: string;
  readonly events: NewEvent[];
  /** What the write weighs, by eventWriteBytes. */
  readonly bytes: number;
}

/** The events of one item in one stream (one trackID: an upsert and its merge), which go in one write. */
interface ItemEvents {
  readonly trackId: string;
  readonly events: NewEvent[];
  bytes: number;
}

/** A stream's events cut into runs of one trackID each, in order. */
function itemsOf(events: readonly NewEvent[]): ItemEvents[] {
  const items: ItemEvents[] = [];
  for (const event of events) {
    const bytes = eventWriteBytes(event);
    const last = items[items.length - 1];
    if (last && last.trackId === event.metadata.trackId) {
      last.events.push(event);
      last.bytes += bytes;
    } else {
      items.push({ trackId: event.metadata.trackId, events: [event], bytes });
    }
  }
  return items;
}

/**
 * Plans every write of an append before the first is sent. The events go by stream (streams in
 * the order of their first event, the events of a stream in order), and a stream's events are cut
 * into consecutive writes of at most `maxBytes` each. An item's events in a stream stay in one
 * write, so each item is stored whole or not at all; an item whose events alone weigh more than
 * `maxBytes` is EventsTooLargeError, thrown before anything is written.
 */
export function planWrites(events: readonly NewEvent[], maxBytes: number): PlannedWrite[] {
  const byStream = new Map<string, NewEvent[]>();
  for (const event of events) {
    const list = byStream.get(event.stream);
    if (list) list.push(event);
    else byStream.set(event.stream, [event]);
  }
  const writes: PlannedWrite[] = [];
  for (const [stream, list] of byStream) {
    let pending: NewEvent[] = [];
    let pendingBytes = 0;
    for (const item of itemsOf(list)) {
      if (item.bytes > maxBytes) throw new EventsTooLargeError(item.trackId, item.bytes, maxBytes);
      if (pending.length > 0 && pendingBytes + item.bytes > maxBytes) {
        writes.push({ stream, events: pending, bytes: pendingBytes });
        pending = [];
        pendingBytes = 0;
      }
      pending.push(...item.events);
      pendingBytes += item.bytes;
    }
    if (pending.length > 0) writes.push({ stream, events: pending, bytes: pendingBytes });
  }
  return writes;
}
