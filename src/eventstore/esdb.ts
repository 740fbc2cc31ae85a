import {
  ANY,
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  FORWARDS,
  START,
  jsonEvent,
  isCommandError,
  type AppendResult,
} from '@eventstore/db-client';
import type { Logger } from '../logger.js';
import { CatchUpFeed } from './esdb-catch-up.js';
import { decodePosition, toRecorded } from './esdb-positions.js';
import { defaultMaxAppendBytes, planWrites } from './esdb-writes.js';
import { defaultPageBytes, eventTypes, maxEventsAhead, type AppendedEvent, type Backlog, type EventStore, type NewEvent, type ReadAllResult, type ReadFilter, type RecordedEvent, StoreUnavailableError } from './port.js';

export interface EsdbEventStoreOptions {
  log: Logger;
  /** An append or read unanswered for this long fails: the request gets 503. */
  timeoutMs?: number;
  /** Called with the number of events of each acknowledged append. */
  onBatch?: (events: number) => void;
  /** The backlog is counted by reading; past this many events it is reported as "at least". */
  backlogCountLimit?: number;
  /** Catch-up subscriptions kept open at most (one per reader position). */
  maxFeeds?: number;
  /** Bytes one write may hold (the server's MaxAppendSize); default 1 MiB. */
  maxAppendBytes?: number;
}

/** Errors that mean "the store cannot be reached now" (503), not a fault of the request. */
const unavailableTypes = new Set<string>([ErrorType.UNAVAILABLE, ErrorType.DEADLINE_EXCEEDED, ErrorType.NOT_LEADER, ErrorType.CANCELLED, ErrorType.TIMEOUT]);

const isCommandFailure = (error: unknown, types: ReadonlySet<string>): boolean =>
  error instanceof Error && isCommandError(error) && types.has(error.type);

/** gRPC status codes of a call that did not reach the server, or got no answer in time. */
const unavailableGrpcCodes = new Set<unknown>([4 /* DEADLINE_EXCEEDED */, 14 /* UNAVAILABLE */]);

const isUnavailable = (error: unknown): boolean =>
  isCommandFailure(error, unavailableTypes) || (error instanceof Error && unavailableGrpcCodes.has((error as { code?: unknown }).code));
const streamNotFound = new Set<string>([ErrorType.STREAM_NOT_FOUND]);

/** Feeds nobody has read from for this long are closed. */
const idleFeedMs = 60_000;

/**
 * The EventStore port on EventStoreDB (or KurrentDB), through `@eventstore/db-client`. The streams,
 * event ids and metadata are those of docs/events.md. Events of one stream in an append are written in
 * one atomic write; an append spanning several streams (a bulk request) writes each stream in
 * turn. Concurrent appends share the client's one batch-append gRPC call, so they are multiplexed
 * rather than waiting for each other's round trip. Projections read through catch-up
 * subscriptions to `$all` (esdb-catch-up.ts).
 */
export class EsdbEventStore implements EventStore {
  /** EventStoreDB deduplicates event ids on a best-effort basis only: readers must apply each id once. */
  readonly mayRepeatEventIds = true;
  private readonly client: EventStoreDBClient;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly feeds = new Set<CatchUpFeed>();
  private readonly timeoutMs: number;

  constructor(
    connectionString: string,
    private readonly options: EsdbEventStoreOptions,
  ) {
    this.client = EventStoreDBClient.connectionString(connectionString);
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  append(events: NewEvent[]): Promise<AppendedEvent[]> {
    if (events.length === 0) return Promise.resolve([]);
    const work = this.appendByStream(events);
    this.inFlight.add(work);
    const forget = (): void => void this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  private async appendByStream(events: NewEvent[]): Promise<AppendedEvent[]> {
    // Every write planned first, under the server's size limit: an item too large for one write
    // is refused before anything of the append is written (esdb-writes.ts).
    const writes = planWrites(events, this.options.maxAppendBytes ?? defaultMaxAppendBytes);
    // One write after the other, so that the events of a bulk request are in `$all` in the order
    // of its elements, as on Postgres (the order the leads list shows).
    const appended = new Map<string, AppendedEvent>();
    for (const { stream, events: list } of writes) {
      const result = await this.guard(
        this.client.appendToStream(
          stream,
          list.map((e) => jsonEvent({ id: e.id, type: e.type, data: e.data, metadata: e.metadata })),
          { expectedRevision: ANY, deadline: this.timeoutMs },
        ),
      );
      for (const a of appendedOf(list, result)) appended.set(a.id, a);
    }
    this.options.onBatch?.(events.length);
    return events.map((e) => appended.get(e.id) as AppendedEvent);
  }

  async readAll(checkpoint: string | null, limit: number, filter: ReadFilter = {}): Promise<ReadAllResult> {
    const page = await this.feedAt(checkpoint).read(limit, filter.maxBytes ?? defaultPageBytes);
    const types = filter.types;
    return { checkpoint: page.checkpoint, bytes: page.bytes, events: types ? page.events.filter((e) => types.includes(e.type)) : page.events };
  }

  /** An idle open feed whose cursor is at `checkpoint`, or a new one subscribed from there. */
  private feedAt(checkpoint: string | null): CatchUpFeed {
    const now = Date.now();
    for (const feed of this.feeds) {
      if (feed.position === checkpoint && !feed.busy) return feed;
      if (now - feed.lastUsed > idleFeedMs) this.closeFeed(feed);
    }
    if (this.feeds.size >= (this.options.maxFeeds ?? 8)) {
      const oldest = [...this.feeds].sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (oldest) this.closeFeed(oldest);
    }
    // A page's worth of data received ahead, at most (a process may have a feed per projection).
    const feed = new CatchUpFeed(this.client, checkpoint, this.options.log, maxEventsAhead, defaultPageBytes);
    this.feeds.add(feed);
    return feed;
  }

  private closeFeed(feed: CatchUpFeed): void {
    this.feeds.delete(feed);
    void feed.close();
  }

  /**
   * Counts the events after `checkpoint` by reading `$all` forwards; past `backlogCountLimit`
   * events it stops and says the count is a lower bound.
   */
  async backlog(checkpoint: string | null, filter: ReadFilter = {}): Promise<Backlog> {
    const types: readonly string[] = filter.types ?? eventTypes;
    const limit = this.options.backlogCountLimit ?? 100_000;
    const from = checkpoint === null ? null : decodePosition(checkpoint);
    let events = 0;
    let scanned = 0;
    let oldestRecordedAt: string | null = null;
    const read = this.client.readAll({ fromPosition: from ?? START, direction: FORWARDS, maxCount: limit * 4, deadline: this.timeoutMs });
    try {
      for await (const resolved of read) {
        const event = resolved.event;
        scanned += 1;
        // A read from a position starts at the event there, which the checkpoint has seen.
        if (!event?.position || (from && event.position.commit === from.commit && event.position.prepare === from.prepare)) continue;
        if (!types.includes(event.type)) continue;
        oldestRecordedAt ??= event.created.toISOString();
        events += 1;
        if (events >= limit) return { events, oldestRecordedAt, atLeast: true };
      }
    } catch (error) {
      throw this.translate(error);
    }
    return { events, oldestRecordedAt, ...(scanned >= limit * 4 && { atLeast: true }) };
  }

  async readStream(stream: string, fromPosition = 0, limit = 10_000): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, { fromRevision: BigInt(fromPosition), maxCount: limit, direction: FORWARDS, deadline: this.timeoutMs });
      for await (const resolved of read) {
        if (resolved.event) events.push(toRecorded(resolved.event));
      }
    } catch (error) {
      if (isCommandFailure(error, streamNotFound)) return [];
      throw this.translate(error);
    }
    return events;
  }

  async ping(): Promise<void> {
    // A health check must answer quickly even when the server hangs.
    const read = this.client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1, deadline: 2_000 });
    try {
      // Read to its end (one event at most), so that the call is over and not left open.
      await read.toArray();
    } catch (error) {
      throw this.translate(error);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    await Promise.all([...this.feeds].map((feed) => feed.close()));
    this.feeds.clear();
    // dispose() waits for every call to report its end, and a call of a connection lost earlier
    // may never do so: it gets a moment, not forever.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.client.dispose(), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
    clearTimeout(timer);
  }

  /** A call that fails as unavailable, or does not answer in time, is StoreUnavailableError (503). */
  private async guard<T>(call: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError('the event store did not answer in time')), this.timeoutMs + 1_000);
    });
    try {
      return await Promise.race([call, timeout]);
    } catch (error) {
      throw this.translate(error);
    } finally {
      clearTimeout(timer);
    }
  }

  private translate(error: unknown): unknown {
    return isUnavailable(error) ? new StoreUnavailableError(undefined, { cause: error }) : error;
  }
}

/**
 * The stream positions of a write's events, from the revision the stream has after it. An
 * idempotent repeat of a write is answered with the revision of the original, so the positions
 * are right then too; whether the write was such a repeat the server does not say.
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
