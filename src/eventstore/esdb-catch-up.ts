import { eventTypeFilter, START, streamNameFilter, type AllStreamResolvedEvent, type AllStreamSubscription, type EventStoreDBClient, type Position } from '@eventstore/db-client';
import type { Logger } from '../logger.js';
import { decodePosition, encodePosition, storedEventTypesRegex, toRecorded } from './esdb-positions.js';
import type { RecordedEvent } from './port.js';

/** How long a read waits for a fuller page while the subscription is still catching up. */
const fillWaitMs = 50;
/** How long a read waits for a first event before answering "nothing new". */
const firstEventWaitMs = 200;
const minBackoffMs = 100;
const maxBackoffMs = 5_000;

export interface FeedPage {
  events: RecordedEvent[];
  /** Bytes of the events' data as JSON text. */
  bytes: number;
  /** After the last event handed out; the feed's cursor. */
  checkpoint: string | null;
  /** The checkpoint after each event, in order. */
  positions: string[];
  /** The subscription had caught up with the store when the page was taken (and it is still open). */
  atEnd: boolean;
}

/** The prefixes of the streams of one account (docs/events.md, Streams). */
export const accountStreamPrefixes = (accountId: string): string[] => ['user', 'anonymous', 'product'].map((kind) => `${kind}-${accountId}-`);

/**
 * A catch-up subscription to `$all`, filtered on the server to the service's event types (or to
 * the streams of one account), read in pages. It resumes after its cursor (the position of the last event handed out); when its
 * connection drops it subscribes again from there, waiting longer after each failure in a row. The
 * events received but not yet handed out are bounded in number and in bytes: the subscription
 * pauses when they pile up.
 */
export class CatchUpFeed {
  private queue: { event: RecordedEvent; position: Position; bytes: number }[] = [];
  private queuedBytes = 0;
  private subscription: AllStreamSubscription | null = null;
  private caughtUp = false;
  private failures = 0;
  private resubscribeTimer: NodeJS.Timeout | null = null;
  private closed = false;
  private arrival: (() => void) | null = null;
  private reading = false;
  /** When this feed last served a read (feeds nobody reads are closed). */
  lastUsed = Date.now();

  constructor(
    private readonly client: EventStoreDBClient,
    private cursor: string | null,
    private readonly log: Logger,
    /** Events kept at most before the subscription is paused. */
    private readonly highWater: number,
    /** Bytes of data kept at most before the subscription is paused (one event more may come). */
    private readonly highWaterBytes: number,
    /** Only the events of this account's streams. */
    readonly accountId?: string,
  ) {
    this.subscribe();
  }

  /** The checkpoint the next read continues from. */
  get position(): string | null {
    return this.cursor;
  }

  /** Whether a read is under way: a second reader must not take a share of its page. */
  get busy(): boolean {
    return this.reading;
  }

  /**
   * Up to `limit` events after the cursor, taken while the data of those before stays under
   * `maxBytes`; waits briefly when less is at hand.
   */
  async read(limit: number, maxBytes: number): Promise<FeedPage> {
    this.lastUsed = Date.now();
    this.reading = true;
    try {
      const full = (): boolean => this.queue.length >= limit || this.queuedBytes >= maxBytes;
      if (!full() && !this.caughtUp) await this.waitForEvents(full, this.queue.length === 0 ? firstEventWaitMs : fillWaitMs);
    } finally {
      this.reading = false;
    }
    let count = 0;
    let bytes = 0;
    for (const item of this.queue) {
      // As on PostgreSQL: events are taken while those before stay under maxBytes.
      if (count >= limit || (count > 0 && bytes >= maxBytes)) break;
      count += 1;
      bytes += item.bytes;
    }
    const taken = this.queue.splice(0, count);
    this.queuedBytes -= bytes;
    const last = taken.at(-1);
    if (last) this.cursor = encodePosition(last.position);
    if (this.subscription?.isPaused() && this.queue.length < this.highWater / 2 && this.queuedBytes < this.highWaterBytes / 2) this.subscription.resume();
    return {
      events: taken.map((item) => item.event),
      checkpoint: this.cursor,
      bytes,
      positions: taken.map((item) => encodePosition(item.position)),
      atEnd: this.caughtUp && !this.closed && this.queue.length === 0,
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.resubscribeTimer) clearTimeout(this.resubscribeTimer);
    this.arrival?.();
    const subscription = this.subscription;
    this.subscription = null;
    await subscription?.unsubscribe().catch(() => undefined);
  }

  private waitForEvents(full: () => boolean, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.arrival = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.arrival = () => {
        if (full() || this.caughtUp || this.closed) done();
      };
    });
  }

  private subscribe(): void {
    if (this.closed) return;
    this.queue = [];
    this.queuedBytes = 0;
    this.caughtUp = false;
    const subscription = this.client.subscribeToAll({
      fromPosition: this.cursor === null ? START : decodePosition(this.cursor),
      // Every stream of an account holds only the service's events.
      filter: this.accountId === undefined ? eventTypeFilter({ regex: storedEventTypesRegex }) : streamNameFilter({ prefixes: accountStreamPrefixes(this.accountId) }),
    });
    this.subscription = subscription;
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      const event = resolved.event;
      if (subscription !== this.subscription || !event) return;
      if (!event.position) {
        this.dropped(new Error(`event ${event.id} of $all came without its position`));
        return;
      }
      const recorded = toRecorded(event);
      // The client hands the data parsed: its JSON length is measured again.
      const bytes = JSON.stringify(recorded.data).length;
      this.queue.push({ event: recorded, position: event.position, bytes });
      this.queuedBytes += bytes;
      this.failures = 0;
      if (this.queue.length >= this.highWater || this.queuedBytes >= this.highWaterBytes) subscription.pause();
      this.arrival?.();
    });
    subscription.on('caughtUp', () => {
      if (subscription !== this.subscription) return;
      this.caughtUp = true;
      this.failures = 0;
      this.arrival?.();
    });
    subscription.on('error', (error: unknown) => {
      if (subscription !== this.subscription || this.closed) return;
      this.dropped(error);
    });
    subscription.on('end', () => {
      if (subscription !== this.subscription || this.closed) return;
      this.dropped(new Error('the subscription to $all ended'));
    });
  }

  /** Subscribes again from the cursor: what was received but not handed out is received again. */
  private dropped(error: unknown): void {
    void this.subscription?.unsubscribe().catch(() => undefined);
    this.subscription = null;
    this.queue = [];
    this.queuedBytes = 0;
    this.caughtUp = false;
    const delay = Math.min(maxBackoffMs, minBackoffMs * 2 ** this.failures);
    this.failures += 1;
    this.log.warn({ err: error, retryInMs: delay }, 'EventStoreDB subscription dropped; subscribing again');
    this.resubscribeTimer = setTimeout(() => {
      this.resubscribeTimer = null;
      this.subscribe();
    }, delay);
  }
}
