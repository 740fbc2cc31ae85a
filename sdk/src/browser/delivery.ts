import { parseRetryAfter } from '../retry.js';
import type { ItemKind } from '../types.js';
import { areaKeys, readArea, StorageArea, usageOf } from './area.js';
import { retryDelayMs } from './backoff.js';
import { maxBatchItems, type StoredBatch } from './batches.js';
import { limitsLeft, siteLimits } from './bounds.js';
import type { FetchLike, LocksLike, StorageLike } from './env.js';
import { errorText, resultsOf, retriable } from './replies.js';

/** What delivery takes from the page (fakes in tests). */
export interface DeliveryEnv {
  storage: StorageLike | null;
  fetch: FetchLike;
  /** navigator.sendBeacon: false when the browser refuses the body. */
  beacon(url: string, body: string): boolean;
  locks: LocksLike | undefined;
  online(): boolean;
  uuid(): string;
  now(): number;
  /** setTimeout, answering its cancel (a fake clock in tests). */
  later(ms: number, run: () => void): () => void;
  random(): number;
  /** Checked before each send: another tab may have opted the visitor out. */
  allowed(): boolean;
  onError(message: string): void;
}

/** What `stats()` answers. */
export interface DeliveryStats {
  /** Items held: waiting, in batches being sent or waiting to be sent again. */
  queued: number;
  /** Items the service stored. */
  sent: number;
  /** Items the service refused: an error element, or a batch refused for good. */
  failed: number;
  /** Items dropped unsent: past the bounds (count, bytes, age), too large to send, or by consent withdrawn. */
  dropped: number;
  /** Attempts that were retries. */
  retried: number;
}

/** Items queued within this long go in the same batches. */
export const cutAfterMs = 1_000;
/** How often a tab looks for the areas of gone tabs. */
export const scanEveryMs = 5_000;
/** Without Web Locks, an area not written for this long is taken for a gone tab's. */
export const staleAreaMs = 3_600_000;

/**
 * Sends one tab's queue: one batch in flight at a time, in order, each with the key it was stored
 * with, until a reply answers it; retried with backoff; by beacon when the page goes away. Each
 * tab has its own storage area under `prefix` and holds its Web Lock while it lives; it takes over
 * the areas of tabs that are gone, whose locks are free.
 */
export class Delivery {
  readonly area: StorageArea;
  private readonly counters = { sent: 0, failed: 0, dropped: 0, retried: 0 };
  private running = false;
  /** Bumped at each stop: work begun before it is abandoned. */
  private generation = 0;
  private inFlight: StoredBatch | null = null;
  private retries = 0;
  /** Cancels of the timers set: a retry's wait, the cut of queued items, the next scan. */
  private retryTimer: (() => void) | undefined;
  private cutTimer: (() => void) | undefined;
  private scanTimer: (() => void) | undefined;
  private cutDue = false;
  /** Batches sent by beacon while the page was hidden: no reply can be read, so they are sent again when it shows. */
  private readonly beaconed = new Set<StoredBatch>();
  private releaseLock: (() => void) | undefined;
  private others = { items: 0, bytes: 0 };
  /** Takeovers asked for and not yet done: flush() waits for them, what they bring is held too. */
  private takeovers = 0;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly env: DeliveryEnv,
    private readonly prefix: string,
    private readonly urlOf: (kind: ItemKind, key: string) => string,
  ) {
    this.area = new StorageArea(env.storage, prefix, env.now, env.onError);
  }

  /** Takes a new area for this tab; writes it and sends once its lock is granted. */
  start(): void {
    if (this.running) return;
    this.running = true;
    const generation = ++this.generation;
    const key = `${this.prefix}${this.env.uuid()}`;
    this.area.key = key;
    const owned = (): void => {
      if (generation !== this.generation) return;
      this.area.writable = true;
      this.area.save();
      this.scan();
      this.pump();
    };
    const locks = this.env.locks;
    if (!locks) return owned();
    locks
      .request(key, () =>
        generation === this.generation
          ? new Promise<void>((release) => {
              this.releaseLock = release;
              owned();
            })
          : Promise.resolve(),
      )
      .catch(owned); // refused (a sandboxed frame): the tab writes its area all the same
  }

  /** Stops sending and lets the area's lock go; what is stored stays for another tab or page. */
  stop(): void {
    this.running = false;
    this.generation += 1;
    for (const cancel of [this.retryTimer, this.cutTimer, this.scanTimer]) cancel?.();
    this.retryTimer = this.cutTimer = this.scanTimer = undefined;
    this.releaseLock?.();
    this.releaseLock = undefined;
    this.area.writable = false;
    this.inFlight = null;
    this.retries = 0;
    this.beaconed.clear();
    this.settle();
  }

  /** Drops every held item, here and in storage. */
  clear(): void {
    this.drop(this.area.count);
    this.area.clear();
    this.settle();
  }

  /** Counts items dropped before they were queued. */
  drop(items: number): void {
    this.counters.dropped += items;
  }

  stats(): DeliveryStats {
    return { ...this.counters, queued: this.area.count, dropped: this.counters.dropped + this.area.dropped };
  }

  enqueue(kind: ItemKind, json: string): void {
    this.area.add({ k: kind, t: this.env.now(), j: json }, limitsLeft(siteLimits, this.others), this.inFlight);
    this.cutTimer ??= this.env.later(cutAfterMs, () => {
      this.cutTimer = undefined;
      this.cutDue = true;
      this.pump();
    });
  }

  /** Settles when every held item, with those taken over from gone tabs, has been answered (or dropped); at once when the tab does not send. */
  flush(): Promise<void> {
    this.cutDue = true;
    const settled = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.pump();
    return settled;
  }

  /**
   * The page is hidden or left: everything held leaves by beacon now (but what an earlier page
   * already sent so), and stays stored until a reply says it arrived.
   */
  hide(): void {
    if (!this.running || !this.env.online() || !this.env.allowed()) return;
    this.area.cut(this.env.uuid);
    for (const batch of this.area.batches) {
      if (this.beaconed.has(batch)) continue;
      this.beaconed.add(batch);
      if (batch.s) continue;
      batch.s = 1;
      const url = this.urlOf(batch.k, batch.id);
      try {
        if (!this.env.beacon(url, batch.b)) this.env.fetch(url, { method: 'POST', body: batch.b, keepalive: true }).catch(() => undefined);
      } catch {
        // Refused as well: the batch is stored, and the next page sends it.
      }
    }
    this.area.save();
  }

  /**
   * The page may go into the back-forward cache, frozen: what is held leaves by beacon, and the lock
   * is let go, so that the page can be cached and another tab may take the area meanwhile.
   */
  suspend(): void {
    this.hide();
    if (this.env.locks) this.stop();
  }

  /** Back from that cache: a new area, and the old one is taken over at once unless another tab took it. */
  resume(): void {
    if (this.running) return this.show();
    this.area.items = [];
    this.area.batches = [];
    this.start();
  }

  /** The page shows again: what left by beacon is sent again, for a reply. */
  show(): void {
    this.beaconed.clear();
    this.pump();
  }

  /** Back online: no need to wait out the backoff of a network error. */
  online(): void {
    this.retryTimer?.();
    this.retryTimer = undefined;
    this.pump();
  }

  private pump(): void {
    if (!this.running || !this.area.writable || this.inFlight || this.retryTimer || !this.env.online() || !this.env.allowed()) return this.settle();
    this.area.bound(limitsLeft(siteLimits, this.others), null);
    if (this.cutDue || this.area.items.length >= maxBatchItems) {
      this.cutDue = false;
      this.area.cut(this.env.uuid);
    }
    const batch = this.area.batches.find((held) => !this.beaconed.has(held));
    if (batch) void this.send(batch);
    else this.settle();
  }

  private async send(batch: StoredBatch): Promise<void> {
    this.inFlight = batch;
    const generation = this.generation;
    let status = 0;
    let retryAfterMs: number | null = null;
    let body: unknown = null;
    try {
      const reply = await this.env.fetch(this.urlOf(batch.k, batch.id), { method: 'POST', body: batch.b, keepalive: false });
      status = reply.status;
      retryAfterMs = parseRetryAfter(reply.headers.get('retry-after'), this.env.now());
      body = await reply.json().catch(() => null);
    } catch {
      // No reply: offline, the service unreachable, or a refusal without CORS headers. Sent again.
    }
    if (generation !== this.generation) return;
    this.inFlight = null;
    this.answer(batch, status, retryAfterMs, body);
    this.pump();
  }

  private answer(batch: StoredBatch, status: number, retryAfterMs: number | null, body: unknown): void {
    const results = status === 200 ? resultsOf(body, batch.n) : null;
    if (results || !retriable(status)) {
      this.area.remove(batch);
      this.retries = 0;
      if (!results) {
        this.counters.failed += batch.n;
        return this.env.onError(`${batch.k} batch refused: HTTP ${status}: ${errorText(body)}`);
      }
      for (const result of results) {
        if (result.status === 'queued') this.counters.sent += 1;
        else {
          this.counters.failed += 1;
          this.env.onError(`${batch.k} item refused: ${result.message}`);
        }
      }
      return;
    }
    // A wrong key or origin is said once per failing streak, not at every retry.
    if (status >= 400 && this.retries === 0) this.env.onError(`${batch.k} batch not accepted, sent again later: HTTP ${status}: ${errorText(body)}`);
    this.counters.retried += 1;
    this.retryTimer = this.env.later(retryDelayMs(this.retries++, retryAfterMs, this.env.random), () => {
      this.retryTimer = undefined;
      this.pump();
    });
  }

  /** Settles flush(): once nothing is held, the area's lock granted and gone tabs' areas taken over (or at once, not running). */
  private settle(): void {
    if (this.running && (!this.area.writable || this.takeovers > 0 || this.area.count > 0)) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Takes over the areas of gone tabs: those whose lock is free (without Web Locks: those long unwritten). */
  private scan(): void {
    const storage = this.env.storage;
    if (!storage || !this.running) return;
    this.scanTimer = this.env.later(scanEveryMs, () => this.scan());
    const keys = areaKeys(storage, this.prefix).filter((key) => key !== this.area.key);
    this.others = usageOf(storage, keys);
    for (const key of keys) {
      const take = (): void => {
        if (!this.running || !this.area.writable) return;
        this.others = usageOf(storage, areaKeys(storage, this.prefix).filter((other) => other !== this.area.key && other !== key));
        this.area.takeOver(key, limitsLeft(siteLimits, this.others), this.inFlight, this.env.uuid);
        this.cutDue = true;
        this.pump();
      };
      if (!this.env.locks) {
        if (this.env.now() - (readArea(storage, key)?.h ?? 0) > staleAreaMs) take();
      } else {
        this.takeovers += 1;
        this.env.locks
          .request(key, { ifAvailable: true }, (lock) => (lock ? take() : undefined))
          .catch(() => undefined)
          .then(() => {
            this.takeovers -= 1;
            this.settle();
          });
      }
    }
  }
}
