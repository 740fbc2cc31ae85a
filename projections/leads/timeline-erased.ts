import type { ErasedMark, EventStore } from '../../src/eventstore/port.js';

/** Where an event of a timeline is stored, as the track index has it. */
export interface StoredPlace {
  eventId: string;
  stream: string;
  streamPosition: number;
}

/** What a timeline shows of an erased event: the erasure, and the instant that stays readable. */
export interface ErasedEvent {
  erasedBy: ErasedMark;
  /** The UTC instant of an erased EventTracked (kept readable); null for the other types. */
  eventTimeUtc: string | null;
}

/** Distinct positions in runs of consecutive ones, each run read from the store at once. */
function runsOf(positions: number[]): { from: number; count: number }[] {
  const runs: { from: number; count: number }[] = [];
  for (const position of [...positions].sort((a, b) => a - b)) {
    const last = runs.at(-1);
    if (last && position === last.from + last.count) last.count += 1;
    else runs.push({ from: position, count: 1 });
  }
  return runs;
}

/**
 * Of the events at `places`, those the store reads as erased (docs/decisions.md, Erasure), by
 * event id: which erasure made each unreadable, and when. Read through the store, as the track
 * lookup reads them: the read models keep nothing of an erased person, not even which erasure it
 * was. A person's erased events are adjacent in their stream, so a page costs about one read per
 * stream.
 */
export async function erasedAmong(store: EventStore, places: StoredPlace[]): Promise<Map<string, ErasedEvent>> {
  const found = new Map<string, ErasedEvent>();
  const byStream = new Map<string, Map<number, string>>();
  for (const place of places) {
    const wanted = byStream.get(place.stream) ?? new Map<number, string>();
    wanted.set(place.streamPosition, place.eventId);
    byStream.set(place.stream, wanted);
  }
  for (const [stream, wanted] of byStream) {
    for (const run of runsOf([...wanted.keys()])) {
      for (const event of await store.readStream(stream, run.from, run.count)) {
        // The event the index has at that place, and no other (a later copy of an id is another place).
        if (wanted.get(event.streamPosition) !== event.id || !event.erased) continue;
        const eventTimeUtc = event.type === 'EventTracked' && event.data.eventTimeUtc ? event.data.eventTimeUtc : null;
        found.set(event.id, { erasedBy: { erasureId: event.erased.erasureId, erasedAt: event.erased.erasedAt }, eventTimeUtc });
      }
    }
  }
  return found;
}
