import { randomUUID } from 'node:crypto';
import { deliver, type DeliveryContext } from './delivery.js';
import { InvalidItemError, QueueFullError, TrackingClosedError, TrackingError, UndeliveredAtExitError } from './errors.js';
import { serialise } from './items.js';
import { holds, released, type HoldingClient } from './lifetime.js';
import { resolveOptions, validIdempotencyKey, type ResolvedOptions, type TrackingClientOptions } from './options.js';
import { KindQueue, newEntry, type Batch } from './queue.js';
import { defaultBackoff, RetryPolicy } from './retry.js';
import { Transport } from './transport.js';
import { itemKinds, type ClientStats, type ItemKind, type ItemResult, type Product, type ProductEvent, type TrackedEvent, type UserProfile } from './types.js';

/**
 * A client of the tracking ingestion service. Each call queues one item and returns a promise of
 * that item's own result; items are sent in batches per kind to the bulk endpoints, each batch under
 * an Idempotency-Key, retried on network errors, timeouts, 408, 429 and 5xx until `retryForMs`.
 */
export class TrackingClient {
  readonly #options: ResolvedOptions;
  readonly #queues = new Map<ItemKind, KindQueue>();
  readonly #delivery: DeliveryContext;
  readonly #counters = { sent: 0, failed: 0, retried: 0 };
  /** Items queued or in flight, and their JSON bytes: what maxQueueSize and maxQueueBytes bound. */
  #heldItems = 0;
  #heldBytes = 0;
  #flushTimer: NodeJS.Timeout | null = null;
  #closing: Promise<void> | null = null;
  readonly #holder: HoldingClient = {
    sendWaiting: () => this.#cutAll(),
    reportUndelivered: () => this.#reportUndelivered(),
  };

  constructor(options: TrackingClientOptions) {
    this.#options = resolveOptions(options);
    const { baseUrl, licenseCode, flushAt, maxBatchBytes, retryForMs } = this.#options;
    for (const kind of itemKinds) this.#queues.set(kind, new KindQueue(kind, flushAt, maxBatchBytes));
    const accountUrl = `${baseUrl}/v1/accounts/${encodeURIComponent(licenseCode)}`;
    this.#delivery = {
      transport: new Transport(this.#options),
      policy: new RetryPolicy({ ...defaultBackoff, retryForMs }),
      urlOf: (kind) => `${accountUrl}/${kind}/bulk`,
      keyOf: (batch) => this.#idempotencyKey(batch),
      report: (error) => this.#report(error),
      finish: (batch) => this.#finish(batch),
      counters: this.#counters,
    };
  }

  /** Queues a user profile (`users/bulk`). */
  identify(user: UserProfile): Promise<ItemResult> {
    return this.send('users', user);
  }

  /** Queues an event (`events/bulk`). */
  track(event: TrackedEvent): Promise<ItemResult> {
    return this.send('events', event);
  }

  /** Queues a product (`products/bulk`). */
  product(product: Product): Promise<ItemResult> {
    return this.send('products', product);
  }

  /** Queues a product event (`productsevents/bulk`). */
  productEvent(event: ProductEvent): Promise<ItemResult> {
    return this.send('productsevents', event);
  }

  /**
   * Queues an item of `kind`. The promise resolves with the item's result; it rejects, at once, only
   * when the item was not queued: QueueFullError, TrackingClosedError, InvalidItemError. A rejected
   * promise nobody awaits does not end the process (the rejection also goes to `onError`).
   */
  send(kind: ItemKind, item: Record<string, unknown>): Promise<ItemResult> {
    try {
      return this.#enqueue(kind, item);
    } catch (error) {
      if (error instanceof TrackingError) this.#report(error);
      const rejected = Promise.reject(error);
      rejected.catch(() => undefined);
      return rejected;
    }
  }

  /** Settles when every item queued before the call has its result (acknowledged or finally failed). */
  async flush(): Promise<void> {
    const lastEntries = [];
    for (const queue of this.#queues.values()) {
      const last = queue.last();
      if (last) lastEntries.push(last.result);
      queue.cut();
      this.#pump(queue);
    }
    this.#pendingChanged();
    await Promise.all(lastEntries);
  }

  /** Flushes, then stops: calls made from now on reject with TrackingClosedError. */
  close(): Promise<void> {
    this.#closing ??= this.flush();
    return this.#closing;
  }

  stats(): ClientStats {
    let queued = 0;
    let inFlight = 0;
    for (const queue of this.#queues.values()) {
      queued += queue.queuedCount;
      inFlight += queue.inFlightCount;
    }
    return { queued, inFlight, ...this.#counters };
  }

  #enqueue(kind: ItemKind, item: unknown): Promise<ItemResult> {
    if (this.#closing) throw new TrackingClosedError();
    const queue = this.#queues.get(kind);
    if (!queue) throw new TypeError(`unknown item kind ${JSON.stringify(kind)}: one of ${itemKinds.join(', ')}`);
    const json = serialise(kind, item);
    const bytes = Buffer.byteLength(json, 'utf8');
    const { maxBatchBytes, maxQueueBytes, maxQueueSize } = this.#options;
    if (bytes + 2 > maxBatchBytes || bytes > maxQueueBytes) {
      const limit = bytes + 2 > maxBatchBytes ? `a bulk body may be (maxBatchBytes ${maxBatchBytes})` : `the queue may hold (maxQueueBytes ${maxQueueBytes})`;
      throw new InvalidItemError(kind, `${kind} item is ${bytes} bytes of JSON: more than ${limit}`);
    }
    if (this.#heldItems + 1 > maxQueueSize || this.#heldBytes + bytes > maxQueueBytes) {
      throw new QueueFullError(
        `queue full: ${this.#heldItems} items, ${this.#heldBytes} bytes queued or in flight (maxQueueSize ${maxQueueSize}, maxQueueBytes ${maxQueueBytes}); the ${kind} item was not queued`,
      );
    }
    const entry = newEntry(json, bytes);
    this.#heldItems += 1;
    this.#heldBytes += bytes;
    holds(this.#holder);
    queue.add(entry);
    this.#pump(queue);
    this.#pendingChanged();
    return entry.result;
  }

  /** Starts the kind's next batch if none is in flight. */
  #pump(queue: KindQueue): void {
    const batch = queue.next();
    if (batch) void deliver(batch, this.#delivery);
  }

  #finish(batch: Batch): void {
    const queue = this.#queues.get(batch.kind) as KindQueue;
    queue.done();
    this.#heldItems -= batch.entries.length;
    for (const entry of batch.entries) this.#heldBytes -= entry.bytes;
    if (this.#heldItems === 0) released(this.#holder);
    // Not from within the batch's delivery: batches that fail at once must not nest their calls.
    queueMicrotask(() => this.#pump(queue));
  }

  #cutAll(): void {
    for (const queue of this.#queues.values()) {
      queue.cut();
      this.#pump(queue);
    }
    this.#pendingChanged();
  }

  /**
   * The flush timer runs while items wait for a cut, so that they are sent within flushIntervalMs;
   * it holds the process until then. Without such items there is no timer.
   */
  #pendingChanged(): void {
    let pending = 0;
    for (const queue of this.#queues.values()) pending += queue.pendingCount;
    if (pending === 0 || this.#options.flushIntervalMs === 0) {
      if (this.#flushTimer) clearTimeout(this.#flushTimer);
      this.#flushTimer = null;
      return;
    }
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = null;
      this.#cutAll();
    }, this.#options.flushIntervalMs);
  }

  #idempotencyKey(batch: Batch): string {
    const derive = this.#options.idempotencyKey;
    if (!derive) return randomUUID();
    const key = derive({ kind: batch.kind, sequence: batch.sequence, items: batch.entries.map((entry) => JSON.parse(entry.json) as Record<string, unknown>) });
    if (!validIdempotencyKey(key)) throw new TypeError(`the idempotencyKey option gave ${JSON.stringify(key)}: a key is 1 to 255 visible ASCII characters`);
    return key;
  }

  #report(error: TrackingError): void {
    try {
      this.#options.onError?.(error);
    } catch {
      // An operator's hook that throws must not stop delivery.
    }
  }

  #reportUndelivered(): void {
    const { queued, inFlight } = this.stats();
    const error = new UndeliveredAtExitError(
      `process exiting with ${queued + inFlight} tracking items not delivered (${queued} queued, ${inFlight} in flight): await client.close() before the process exits`,
    );
    if (this.#options.onError) this.#report(error);
    else console.error(`${error.name}: ${error.message}`);
  }
}
