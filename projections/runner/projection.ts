import type pg from 'pg';
import type { EventType, RecordedEvent } from '../../src/eventstore/port.js';

/** A connection inside the batch's transaction. */
export type Db = pg.ClientBase;

/**
 * A projection: a pure function of the events, applied in batches. `apply` runs inside the
 * transaction that also stores the checkpoint, and must give the same rows however the events are
 * split into batches (no clock, no randomness: times come from the events' metadata).
 */
export interface Projection {
  readonly name: string;
  readonly eventTypes: readonly EventType[];
  /** false when `apply` uses only the events' ids, types, positions and metadata. */
  readonly readsData?: boolean;
  /**
   * true when every row `apply` writes is keyed by its event's id, written once: an event read
   * twice then adds no item (the track index only notes where a later copy is stored), and the
   * runner need not remember applied ids.
   */
  readonly keyedByEventId?: boolean;
  /** Read-model tables, emptied by a rebuild. */
  readonly tables: readonly string[];
  apply(db: Db, events: RecordedEvent[]): Promise<void>;
}
