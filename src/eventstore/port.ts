import type { EventMetadata, EventType, TrackingEvent } from './events.js';

export { eventTypes, type EventMetadata, type EventType } from './events.js';

/** Called after each committed append batch: its number of events, and the accounts they are of. */
export type OnBatch = (events: number, accountIds: readonly string[]) => void;

/** The distinct accounts of events about to be (or just) stored. */
export const accountsOf = (events: readonly { metadata: EventMetadata }[]): string[] => [...new Set(events.map((e) => e.metadata.accountId))];

/** An event to append: one of the contract's events, where it goes, and its metadata. */
export type NewEvent<E extends TrackingEvent = TrackingEvent> = E & {
  id: string;
  stream: string;
  metadata: EventMetadata;
  /**
   * The person key that must seal it, not stored (a merge's events: src/ingest/identity-map.ts);
   * when that key is erased by then, the event is stored as erased. Else the person's current key.
   */
  sealingKeyId?: number;
};

export interface AppendedEvent {
  id: string;
  stream: string;
  streamPosition: number;
  /** Where the append landed in the store's global order (EventStoreDB: the one position the server reports for the write). */
  globalPosition: number;
  /**
   * True when an event with this id was already stored: the append was an idempotent no-op for it.
   * False also where the store does not say (EventStoreDB).
   */
  duplicate: boolean;
}

/** A stored event, typed by the contract (events.ts `fromStored`). */
export type RecordedEvent<E extends TrackingEvent = TrackingEvent> = E & {
  id: string;
  stream: string;
  streamPosition: number;
  globalPosition: number;
  metadata: EventMetadata;
  recordedAt: string;
  /**
   * The checkpoint just past this event, on events of `readAll`: a reader that stopped after it
   * resumes there (an export's or a feed's cursor).
   */
  position?: string;
  /**
   * Set when the event's person was erased (docs/decisions.md, Erasure): its personal fields read
   * empty, and only its ids, type and times remain. Projections of people skip it.
   */
  erased?: ErasedMark;
};

/** Which erasure made an event unreadable, and when (null: its key is gone and nothing says why). */
export interface ErasedMark {
  erasureId: string | null;
  erasedAt: string | null;
}

/**
 * The event store could not take or answer a call now: unreachable, not answering in time, not
 * ready, refusing. What an append was writing may or may not have been stored (docs/decisions.md,
 * Replies); the same append again later may succeed and stores nothing twice. The HTTP layer
 * answers it 503.
 */
export class StoreUnavailableError extends Error {
  constructor(
    message = 'the event store is unavailable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Whatever a call to the event store failed with, as a StoreUnavailableError (the error as its cause). */
export function asStoreUnavailable(error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`the event store failed: ${reason}`, { cause: error });
}

export interface ReadAllResult {
  events: RecordedEvent[];
  /**
   * Opaque position to pass to the next read: past every event looked at, also those the filter
   * left out; unchanged when nothing new was read.
   */
  checkpoint: string | null;
  /** Bytes of the events' data as JSON text: what the page weighs, roughly, once parsed. */
  bytes: number;
  /**
   * true when the page holds every event readable now past the checkpoint: a reader that applied
   * it was caught up as of the read. false when more is readable (the page was cut), or when a
   * page with nothing new does not mean that nothing more is stored (a subscription still catching
   * up): the reader must look again rather than wait to be told of new events.
   */
  atEnd?: boolean;
}

/**
 * Bytes of event data a catch-up page holds at most (besides its first event, which always comes:
 * a page makes progress however large one event is). Pages, buffers and projection batches are
 * bounded by it as well as by a number of events, so that large events cannot exhaust the heap.
 */
export const defaultPageBytes = 4 * 1024 * 1024;

/**
 * Events held in memory ahead of their readers at most: received from EventStoreDB before a reader
 * asks for them (per subscription), or kept by a process's shared read for its other projections.
 * A few batches' worth; the bytes are bounded by a multiple of defaultPageBytes.
 */
export const maxEventsAhead = 20_000;

export interface ReadFilter {
  /** Only events of these types are returned; the checkpoint still moves past the others. */
  types?: readonly EventType[];
  /**
   * false: events come without `data` (an empty object, not their type's shape), for readers that
   * need only where and what.
   */
  data?: boolean;
  /** Bytes of data (JSON text) the page holds at most, past its first event; default defaultPageBytes. */
  maxBytes?: number;
  /**
   * Only the events of this account (metadata.accountId), in the same order; the checkpoint moves
   * past the last of them. A reader that follows one account need not read past the others'.
   */
  accountId?: string;
}

/** A reader whose backlog is asked for: where it is, and what it reads. */
export interface BacklogQuery {
  checkpoint: string | null;
  filter: ReadFilter;
}

/** The accounts with events in a stretch of the store, read in catch-up order (discovery). */
export interface AccountsScan {
  /**
   * Each account met, once, with a checkpoint before its first event met (a reader of that account
   * from there misses none of its events in the stretch) and the checkpoint just past its last
   * event met (a reader there has read them all), in the order first met.
   */
  accounts: { accountId: string; before: string | null; last: string }[];
  /** Past every event looked at; unchanged when nothing new was read. */
  checkpoint: string | null;
  /** true when the scan looked at every event there was past its checkpoint (not cut by its limit). */
  atEnd?: boolean;
}

/** How far a reader at some checkpoint is behind the head of the store. */
export interface Backlog {
  /** Events (of the filter's types) after the checkpoint. */
  events: number;
  /** When the oldest of them was recorded; null when there are none. */
  oldestRecordedAt: string | null;
  /** True when the store stopped counting: there are at least `events`. */
  atLeast?: boolean;
}

/**
 * The event store port. `append` stores all of its events atomically, in order, and resolves only
 * once they are durable. Events whose id is already stored are not stored again.
 */
export interface EventStore {
  /**
   * True when a catch-up read may return an event id more than once (EventStoreDB deduplicates
   * only on a best-effort basis): projections must then apply each id once themselves.
   */
  readonly mayRepeatEventIds?: boolean;
  append(events: NewEvent[]): Promise<AppendedEvent[]>;
  /**
   * Up to `limit` events after `checkpoint` (null: from the start), and up to `filter.maxBytes` of
   * data, in an order that never skips a late commit: the catch-up read of projections.
   */
  readAll(checkpoint: string | null, limit: number, filter?: ReadFilter): Promise<ReadAllResult>;
  backlog(checkpoint: string | null, filter?: ReadFilter): Promise<Backlog>;
  /** The backlog of each of several readers (each with its own checkpoint and filter), in one go where the store allows. */
  backlogs(readers: readonly BacklogQuery[]): Promise<Backlog[]>;
  /**
   * The accounts of up to `limit` events after `checkpoint`, in catch-up order. `withUnsettled`:
   * also those of events a catch-up read does not return yet (committed after a transaction still
   * running), as `backlog` counts them: what a reader has still to read, not where it may go.
   */
  scanAccounts(checkpoint: string | null, limit: number, options?: { withUnsettled?: boolean }): Promise<AccountsScan>;
  /** Orders two checkpoints of this store (null: the start): negative, zero or positive. */
  comparePositions(a: string | null, b: string | null): number;
  readStream(stream: string, fromPosition?: number, limit?: number): Promise<RecordedEvent[]>;
  /** Throws when the store cannot accept appends. */
  ping(): Promise<void>;
  /** Waits for appends in flight, then releases resources. */
  close(): Promise<void>;
}
