import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { EsdbEventStore } from './esdb.js';
import type { EventStore, OnBatch } from './port.js';
import { PersonKeys } from './person-keys.js';
import { PostgresEventStore } from './postgres.js';
import { Pseudonyms } from './pseudonyms.js';
import { SealedEventStore } from './sealed-store.js';

export interface EventStoreSelection {
  /** EVENTSTORE_URL: an EventStoreDB connection string; unset, the events are kept in Postgres. */
  eventStoreUrl: string | undefined;
  queryTimeoutMs: number;
  /** Bytes one write to EventStoreDB may hold; default 1 MiB. */
  esdbMaxAppendBytes?: number;
  /** false: new events are stored as they are, unsealed (SEALING=off, for measuring); they are still read opened. */
  sealing?: boolean;
}

/**
 * The event store a process uses: EventStoreDB when EVENTSTORE_URL is set, Postgres otherwise;
 * either way sealing each person's data with their key (sealed-store.ts).
 */
export function createEventStore(
  selection: EventStoreSelection,
  pool: Pool,
  log: Logger,
  onBatch?: OnBatch,
): EventStore {
  const keys = new PersonKeys(pool, { flushedWithTheEvents: !selection.eventStoreUrl });
  return new SealedEventStore(adapter(selection, pool, log, onBatch), keys, new Pseudonyms(pool), { seal: selection.sealing !== false });
}

function adapter(selection: EventStoreSelection, pool: Pool, log: Logger, onBatch?: OnBatch): EventStore {
  if (selection.eventStoreUrl) {
    return new EsdbEventStore(selection.eventStoreUrl, {
      log: log.child({ component: 'eventstoredb' }),
      timeoutMs: selection.queryTimeoutMs,
      onBatch,
      maxAppendBytes: selection.esdbMaxAppendBytes,
    });
  }
  return new PostgresEventStore(pool, { onBatch });
}
