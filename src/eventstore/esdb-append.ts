/** The writes of the EventStoreDB adapter: one per stream, with expected revision `any`. */

import { ANY, jsonEvent, type AppendResult, type EventStoreDBClient } from '@eventstore/db-client';
import type { Logger } from '../logger.js';
import { isWrongExpectedVersion } from './esdb-client.js';
import { planWrites } from './esdb-writes.js';
import { StoreUnavailableError, type AppendedEvent, type NewEvent } from './port.js';

/** A call to the store, bounded in time; its failures are StoreUnavailableError (the raw error as cause). */
export type GuardedCall = <T>(work: Promise<T>) => Promise<T>;

export interface StreamWrites {
  client: EventStoreDBClient;
  guarded: GuardedCall;
  /** The deadline of each write, in ms. */
  deadlineMs: number;
  /** Bytes one write may hold (the server's MaxAppendSize). */
  maxAppendBytes: number;
  log: Logger;
}

/**
 * Writes the events of each stream in one write, or in several under the server's size limit,
 * planned before the first is sent so that an item too large for one write is refused before
 * anything is written (esdb-writes.ts). One write after the other, so that the events of a bulk
 * request are in `$all` in the order of its elements, as on Postgres (the order the leads list
 * shows). Resolves with the events' positions in the order given.
 */
export async function appendByStream(writes: StreamWrites, events: NewEvent[]): Promise<AppendedEvent[]> {
  const planned = planWrites(events, writes.maxAppendBytes);
  const appended = new Map<string, AppendedEvent>();
  for (const { stream, events: list } of planned) {
    for (const a of await writeStream(writes, stream, list)) appended.set(a.id, a);
  }
  return events.map((e) => appended.get(e.id) as AppendedEvent);
}

/**
 * One stream's events in one atomic write. A repeat of an earlier write is recognised by the
 * server only through its cache of recent event ids: when it still has the first id but no longer
 * a later one, it answers WrongExpectedVersion although the expected revision is `any`. Each event
 * is then written alone: a write of one event is either recognised whole or stored again, and
 * readers apply each id once (docs/eventstoredb.md, Duplicates).
 */
async function writeStream(writes: StreamWrites, stream: string, list: NewEvent[]): Promise<AppendedEvent[]> {
  const write = (batch: NewEvent[]): Promise<AppendResult> =>
    writes.guarded(
      writes.client.appendToStream(
        stream,
        batch.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
        { expectedRevision: ANY, deadline: writes.deadlineMs },
      ),
    );
  try {
    return appendedOf(list, await write(list));
  } catch (error) {
    if (list.length < 2 || !(error instanceof StoreUnavailableError && isWrongExpectedVersion(error.cause))) throw error;
    writes.log.info({ stream, events: list.length }, 'a repeated write partly remembered by EventStoreDB: written again one event at a time');
    const appended: AppendedEvent[] = [];
    for (const event of list) appended.push(...appendedOf([event], await write([event])));
    return appended;
  }
}

/**
 * The stream positions of a write's events, from the revision the stream has after it. A repeat
 * the server recognises is answered with the revision of the original, so the positions are right
 * then too; whether the write was such a repeat the server does not say. The write's one position
 * in `$all` stands for all of its events.
 */
function appendedOf(events: NewEvent[], result: AppendResult): AppendedEvent[] {
  const last = Number(result.nextExpectedRevision);
  return events.map((event, i) => ({
    id: event.id,
    stream: event.stream,
    streamPosition: last - (events.length - 1 - i),
    globalPosition: result.position ? Number(result.position.commit) : -1,
    duplicate: false,
  }));
}
