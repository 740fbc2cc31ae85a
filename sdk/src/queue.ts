import type { ItemKind, ItemResult } from './types.js';

/** One item held by the client, from the call that queued it until its result. */
export interface Entry {
  /** The item as sent: serialised when queued, so later changes to the caller's object do not leak in. */
  json: string;
  /** UTF-8 bytes of `json`. */
  bytes: number;
  /** The call's promise: resolved with the result, never rejected once queued. */
  result: Promise<ItemResult>;
  settle(result: ItemResult): void;
}

/** Items of one kind cut into one bulk request, in enqueue order. */
export interface Batch {
  kind: ItemKind;
  /** Its number among the batches of its kind, from 0 (BatchInfo.sequence). */
  sequence: number;
  entries: Entry[];
  /** UTF-8 bytes of the JSON array body. */
  bytes: number;
}

export function newEntry(json: string, bytes: number): Entry {
  let settle!: (result: ItemResult) => void;
  const result = new Promise<ItemResult>((resolve) => (settle = resolve));
  return { json, bytes, result, settle };
}

/** The JSON array of `entries`: `[a,b,c]`. */
export function bodyOf(batch: Batch): string {
  return `[${batch.entries.map((entry) => entry.json).join(',')}]`;
}

/**
 * The items of one kind: those not yet in a batch, the batches cut and waiting, and the one batch in
 * flight (one at a time, so that a kind's items are stored in the order they were queued). Batches
 * are cut in enqueue order, at `flushAt` items or before the item that would take the body past
 * `maxBatchBytes`, and by `cut()` (a timed flush, flush()).
 */
export class KindQueue {
  private pending: Entry[] = [];
  /** Bytes of the body `pending` would make: brackets, items and the commas between them. */
  private pendingBodyBytes = 2;
  private readonly ready: Batch[] = [];
  inFlight: Batch | null = null;
  private batchesCut = 0;

  constructor(
    readonly kind: ItemKind,
    private readonly flushAt: number,
    private readonly maxBatchBytes: number,
  ) {}

  /** Adds an entry (one that fits a body on its own), cutting batches as the limits say. */
  add(entry: Entry): void {
    if (this.pending.length > 0 && this.pendingBodyBytes + 1 + entry.bytes > this.maxBatchBytes) this.cut();
    this.pendingBodyBytes += (this.pending.length > 0 ? 1 : 0) + entry.bytes;
    this.pending.push(entry);
    if (this.pending.length >= this.flushAt) this.cut();
  }

  /** Makes a batch of the entries not yet in one, if any. */
  cut(): void {
    if (this.pending.length === 0) return;
    this.ready.push({ kind: this.kind, sequence: this.batchesCut++, entries: this.pending, bytes: this.pendingBodyBytes });
    this.pending = [];
    this.pendingBodyBytes = 2;
  }

  /** The next batch to send, if none is in flight; it is then in flight until `done()`. */
  next(): Batch | null {
    if (this.inFlight) return null;
    this.inFlight = this.ready.shift() ?? null;
    return this.inFlight;
  }

  done(): void {
    this.inFlight = null;
  }

  /** The entry queued last: entries of a kind settle in enqueue order, so it settles last. */
  last(): Entry | null {
    const batch = this.ready.at(-1) ?? this.inFlight;
    return this.pending.at(-1) ?? batch?.entries.at(-1) ?? null;
  }

  get pendingCount(): number {
    return this.pending.length;
  }

  /** Items waiting: not in a batch, or in a batch not yet sent. */
  get queuedCount(): number {
    return this.pending.length + this.ready.reduce((sum, batch) => sum + batch.entries.length, 0);
  }

  get inFlightCount(): number {
    return this.inFlight?.entries.length ?? 0;
  }
}
