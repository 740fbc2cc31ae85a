import { ANY, BACKWARDS, END, FORWARDS, START, type EventStoreDBClient } from '@eventstore/db-client';
import type { Logger } from '../logger.js';
import { appendByStream } from './esdb-append.js';
import { accountStreamPrefixes, CatchUpFeed } from './esdb-catch-up.js';
import { EsdbClients, isStreamNotFound } from './esdb-client.js';
import { decodePosition, encodePosition, toRecorded } from './esdb-positions.js';
import { isEventType } from './events.js';
import { defaultMaxAppendBytes } from '../config.js';
import { accountsOf, defaultPageBytes, eventTypes, type OnBatch, maxEventsAhead, type AccountsScan, type AppendedEvent, type Backlog, type BacklogQuery, type EventStore, type NewEvent, type ReadAllResult, type ReadFilter, type RecordedEvent, asStoreUnavailable, StoreUnavailableError } from './port.js';

export interface EsdbEventStoreOptions {
  log: Logger;
  /** An append or read unanswered for this long fails: the request gets 503. */
  timeoutMs?: number;
  /** Called with the number of events of each acknowledged append, and their accounts. */
  onBatch?: OnBatch;
  /** The backlog is counted by reading; past this many events it is reported as "at least". */
  backlogCountLimit?: number;
  /** Catch-up subscriptions kept open at most (one per reader position). */
  maxFeeds?: number;
  /** Bytes one write may hold (the server's MaxAppendSize); default 1 MiB. */
  maxAppendBytes?: number;
}

/**
 * Catch-up subscriptions open at most: one per position read from, of all accounts (discovery) or
 * of one account (its projections' cursors).
 */
const defaultMaxFeeds = 64;

/** Feeds nobody has read from for this long are closed. */
const idleFeedMs = 60_000;

/** How long a health check waits for each of its calls. */
const pingMs = 2_000;

/** The stream the health check writes nothing to: a write of no events stores nothing. */
export const healthStream = 'tracking-health';

/**
 * The EventStore port on EventStoreDB (or KurrentDB), through `@eventstore/db-client`. The streams,
 * event ids and metadata are those of docs/events.md. Events of one stream in an append are written in
 * one atomic write; an append spanning several streams (a bulk request) writes each stream in
 * turn (esdb-append.ts). Concurrent appends share the client's one batch-append gRPC call, so they
 * are multiplexed rather than waiting for each other's round trip. Projections read through
 * catch-up subscriptions to `$all` (esdb-catch-up.ts). Every failure of a call is a
 * StoreUnavailableError (esdb-client.ts), and a client left broken by a failed discovery is
 * replaced.
 */
export class EsdbEventStore implements EventStore {
  /** EventStoreDB deduplicates event ids on a best-effort basis only: readers must apply each id once. */
  readonly mayRepeatEventIds = true;
  private readonly clients: EsdbClients;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly feeds = new Set<CatchUpFeed>();
  private readonly timeoutMs: number;

  constructor(
    connectionString: string,
    private readonly options: EsdbEventStoreOptions,
  ) {
    // The catch-up subscriptions of a replaced client are opened again on the new one, from their cursors.
    this.clients = new EsdbClients(connectionString, options.log, () => {
      for (const feed of this.feeds) this.closeFeed(feed);
    });
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  append(events: NewEvent[]): Promise<AppendedEvent[]> {
    if (events.length === 0) return Promise.resolve([]);
    const client = this.clients.current;
    const work = appendByStream(
      { client, guarded: (call) => this.guard(client, call), deadlineMs: this.timeoutMs, log: this.options.log, maxAppendBytes: this.options.maxAppendBytes ?? defaultMaxAppendBytes },
      events,
    ).then((appended) => {
      this.options.onBatch?.(events.length, accountsOf(events));
      return appended;
    });
    this.inFlight.add(work);
    const forget = (): void => void this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  async readAll(checkpoint: string | null, limit: number, filter: ReadFilter = {}): Promise<ReadAllResult> {
    const page = await this.feedAt(checkpoint, filter.accountId).read(limit, filter.maxBytes ?? defaultPageBytes);
    const types = filter.types;
    const events = page.events.map((event, i) => ({ ...event, position: page.positions[i] }));
    return { checkpoint: page.checkpoint, bytes: page.bytes, atEnd: page.atEnd, events: types ? events.filter((e) => types.includes(e.type)) : events };
  }

  /**
   * An idle open feed (of that account's streams, or of all) whose cursor is at `checkpoint`, or a
   * new one subscribed from there.
   */
  private feedAt(checkpoint: string | null, accountId?: string): CatchUpFeed {
    const now = Date.now();
    for (const feed of this.feeds) {
      if (feed.position === checkpoint && feed.accountId === accountId && !feed.busy) return feed;
      if (now - feed.lastUsed > idleFeedMs) this.closeFeed(feed);
    }
    if (this.feeds.size >= (this.options.maxFeeds ?? defaultMaxFeeds)) {
      const oldest = [...this.feeds].sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (oldest) this.closeFeed(oldest);
    }
    // A page's worth of data received ahead, at most; less for a feed of one account, as a
    // process may follow many accounts at once.
    const feed =
      accountId === undefined
        ? new CatchUpFeed(this.clients.current, checkpoint, this.options.log, maxEventsAhead, defaultPageBytes)
        : new CatchUpFeed(this.clients.current, checkpoint, this.options.log, maxEventsAhead / 4, defaultPageBytes / 4, accountId);
    this.feeds.add(feed);
    return feed;
  }

  /**
   * Discovery follows a subscription (it keeps reading from where it stopped); a one-off look
   * (`withUnsettled`: status, the tests' wait) reads `$all` once instead, which opens nothing.
   */
  async scanAccounts(checkpoint: string | null, limit: number, options: { withUnsettled?: boolean } = {}): Promise<AccountsScan> {
    const page = options.withUnsettled ? await this.readOnce(checkpoint, limit) : await this.feedAt(checkpoint).read(limit, defaultPageBytes);
    const accounts = new Map<string, { accountId: string; before: string | null; last: string }>();
    let before = checkpoint;
    page.events.forEach((event, i) => {
      const accountId = event.metadata.accountId;
      const position = page.positions[i] ?? before ?? '';
      if (typeof accountId === 'string') {
        const met = accounts.get(accountId);
        if (met) met.last = position;
        else accounts.set(accountId, { accountId, before, last: position });
      }
      before = position;
    });
    return { accounts: [...accounts.values()], checkpoint: page.checkpoint, atEnd: page.atEnd };
  }

  /** Up to `limit` of the service's events after `checkpoint`, read once (no subscription), with their positions. */
  private async readOnce(checkpoint: string | null, limit: number): Promise<{ events: RecordedEvent[]; positions: string[]; checkpoint: string | null; atEnd: boolean }> {
    const from = checkpoint === null ? null : decodePosition(checkpoint);
    const client = this.clients.current;
    const events: RecordedEvent[] = [];
    const positions: string[] = [];
    let last = checkpoint;
    let read = 0;
    try {
      for await (const resolved of client.readAll({ fromPosition: from ?? START, direction: FORWARDS, maxCount: limit, deadline: this.timeoutMs })) {
        read += 1;
        const event = resolved.event;
        // A read from a position starts at the event there, which the checkpoint has seen.
        if (!event?.position || (from && event.position.commit === from.commit && event.position.prepare === from.prepare)) continue;
        last = encodePosition(event.position);
        if (!isEventType(event.type)) continue;
        events.push(toRecorded(event));
        positions.push(last);
      }
    } catch (error) {
      throw this.failure(client, error);
    }
    return { events, positions, checkpoint: last, atEnd: read < limit };
  }

  comparePositions(a: string | null, b: string | null): number {
    if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
    const pa = decodePosition(a);
    const pb = decodePosition(b);
    const diff = pa.commit !== pb.commit ? pa.commit - pb.commit : pa.prepare - pb.prepare;
    return diff === 0n ? 0 : diff < 0n ? -1 : 1;
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
    const prefixes = filter.accountId === undefined ? null : accountStreamPrefixes(filter.accountId);
    const from = checkpoint === null ? null : decodePosition(checkpoint);
    let events = 0;
    let scanned = 0;
    let oldestRecordedAt: string | null = null;
    const client = this.clients.current;
    const read = client.readAll({ fromPosition: from ?? START, direction: FORWARDS, maxCount: limit * 4, deadline: this.timeoutMs });
    try {
      for await (const resolved of read) {
        const event = resolved.event;
        scanned += 1;
        // A read from a position starts at the event there, which the checkpoint has seen.
        if (!event?.position || (from && event.position.commit === from.commit && event.position.prepare === from.prepare)) continue;
        if (!types.includes(event.type)) continue;
        if (prefixes && !prefixes.some((prefix) => event.streamId.startsWith(prefix))) continue;
        oldestRecordedAt ??= event.created.toISOString();
        events += 1;
        if (events >= limit) return { events, oldestRecordedAt, atLeast: true };
      }
    } catch (error) {
      throw this.failure(client, error);
    }
    return { events, oldestRecordedAt, ...(scanned >= limit * 4 && { atLeast: true }) };
  }

  /**
   * Every reader's backlog from one read of `$all`, from the earliest of their checkpoints (one
   * read per reader would read the log once each); past `backlogCountLimit` times four events
   * read, every count is a lower bound.
   */
  async backlogs(readers: readonly BacklogQuery[]): Promise<Backlog[]> {
    if (readers.length === 0) return [];
    const limit = this.options.backlogCountLimit ?? 100_000;
    const counts: Backlog[] = readers.map(() => ({ events: 0, oldestRecordedAt: null }));
    const from = readers.map((r) => (r.checkpoint === null ? null : decodePosition(r.checkpoint)));
    const prefixes = readers.map((r) => (r.filter.accountId === undefined ? null : accountStreamPrefixes(r.filter.accountId)));
    const types = readers.map((r) => r.filter.types ?? eventTypes);
    // The earliest checkpoint; a reader at the start (null) makes it the start.
    const start = readers.reduce<string | null>((min, r) => (min === null || r.checkpoint === null ? null : this.comparePositions(r.checkpoint, min) < 0 ? r.checkpoint : min), readers[0]?.checkpoint ?? null);
    const client = this.clients.current;
    let scanned = 0;
    try {
      const read = client.readAll({ fromPosition: start === null ? START : decodePosition(start), direction: FORWARDS, maxCount: limit * 4, deadline: this.timeoutMs });
      for await (const resolved of read) {
        const event = resolved.event;
        scanned += 1;
        const position = event?.position;
        if (!event || !position) continue;
        readers.forEach((_, i) => {
          const after = from[i];
          if (after && (position.commit < after.commit || (position.commit === after.commit && position.prepare <= after.prepare))) return;
          if (!(types[i] as readonly string[]).includes(event.type)) return;
          const wanted = prefixes[i];
          if (wanted && !wanted.some((prefix) => event.streamId.startsWith(prefix))) return;
          const count = counts[i] as Backlog;
          count.events += 1;
          count.oldestRecordedAt ??= event.created.toISOString();
        });
      }
    } catch (error) {
      throw this.failure(client, error);
    }
    return scanned >= limit * 4 ? counts.map((c) => ({ ...c, atLeast: true })) : counts;
  }

  async readStream(stream: string, fromPosition = 0, limit = 10_000): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    const client = this.clients.current;
    try {
      const read = client.readStream(stream, { fromRevision: BigInt(fromPosition), maxCount: limit, direction: FORWARDS, deadline: this.timeoutMs });
      for await (const resolved of read) {
        if (resolved.event) events.push(toRecorded(resolved.event));
      }
    } catch (error) {
      if (isStreamNotFound(error)) return [];
      throw this.failure(client, error);
    }
    return events;
  }

  /**
   * The write path and the read path, each within 2 s: a write of no events (stored nowhere, but
   * answered by the leader as any write is: refused while there is none, or while it is not ready),
   * and a read of the last event of `$all`, read to its end so that the call is over.
   */
  async ping(): Promise<void> {
    const client = this.clients.current;
    await Promise.all([
      this.guard(client, client.appendToStream(healthStream, [], { expectedRevision: ANY, deadline: pingMs }), pingMs),
      this.guard(client, client.readAll({ fromPosition: END, direction: BACKWARDS, maxCount: 1, deadline: pingMs }).toArray(), pingMs),
    ]);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    await Promise.all([...this.feeds].map((feed) => feed.close()));
    this.feeds.clear();
    await this.clients.close();
  }

  /** A call that fails, or does not answer in time, is StoreUnavailableError (503). */
  private async guard<T>(client: EventStoreDBClient, call: Promise<T>, ms = this.timeoutMs + 1_000): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreUnavailableError('the event store did not answer in time')), ms);
    });
    try {
      return await Promise.race([call, timeout]);
    } catch (error) {
      throw this.failure(client, error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Whatever a call fails with is a StoreUnavailableError (503): an unreachable server, a failed
   * discovery, a node not ready or too busy (an error of code 0, which the client reports as
   * unknown), a timeout, a WrongExpectedVersion. None of them is the request's fault.
   */
  private failure(client: EventStoreDBClient, error: unknown): StoreUnavailableError {
    this.clients.failed(client, error);
    return asStoreUnavailable(error);
  }
}
