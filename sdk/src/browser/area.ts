import { limitsLeft, unitsToDrop, type HeldUnit, type QueueLimits } from './bounds.js';
import { cutBatches, type QueuedItem, type StoredBatch } from './batches.js';
import type { StorageLike } from './env.js';

/** An area as stored: loose items, batches, and when it was last written. */
export interface AreaData {
  i: QueuedItem[];
  b: StoredBatch[];
  h: number;
}

/** An area's stored data, or null when there is none or it is unreadable. */
export function readArea(storage: StorageLike, key: string): AreaData | null {
  try {
    const data = JSON.parse(storage.getItem(key) ?? 'null') as AreaData | null;
    return data && Array.isArray(data.i) && Array.isArray(data.b) ? data : null;
  } catch {
    return null;
  }
}

/** The keys of the areas under `prefix` (the site's areas of one license). */
export function areaKeys(storage: StorageLike, prefix: string): string[] {
  const keys: string[] = [];
  for (let index = 0; index < storage.length; index += 1) {
    const key = storage.key(index);
    if (key?.startsWith(prefix)) keys.push(key);
  }
  return keys;
}

/** What the areas of `keys` hold together: their items, and their stored length. */
export function usageOf(storage: StorageLike, keys: readonly string[]): { items: number; bytes: number } {
  let items = 0;
  let bytes = 0;
  for (const key of keys) {
    bytes += storage.getItem(key)?.length ?? 0;
    const data = readArea(storage, key);
    if (data) items += data.i.length + data.b.reduce((sum, batch) => sum + batch.n, 0);
  }
  return { items, bytes };
}

/**
 * The queue of one tab, mirrored whole into one storage key at every change, so that a reload, a
 * crash or a closed tab loses nothing: loose items, and batches cut with their Idempotency-Key.
 * Only the tab that holds the area's lock writes it (`writable`).
 */
export class StorageArea {
  items: QueuedItem[] = [];
  batches: StoredBatch[] = [];
  writable = false;
  /** Items dropped by the bounds. */
  dropped = 0;
  private failedWrite = false;

  constructor(
    private readonly storage: StorageLike | null,
    public key: string,
    private readonly now: () => number,
    private readonly onError: (message: string) => void,
  ) {}

  /** Items held, loose and in batches. */
  get count(): number {
    return this.items.length + this.batches.reduce((sum, batch) => sum + batch.n, 0);
  }

  add(item: QueuedItem, limits: QueueLimits, inFlight: StoredBatch | null): void {
    this.items.push(item);
    this.bound(limits, inFlight);
    this.save();
  }

  /** Drops what is too old or past the limits, oldest first; never the batch in flight, whose fate its reply decides. */
  bound(limits: QueueLimits, inFlight: StoredBatch | null): void {
    const batches = this.batches.filter((batch) => batch !== inFlight);
    const units: HeldUnit[] = [
      ...batches.map((batch) => ({ t: batch.t, n: batch.n, size: batch.b.length })),
      ...this.items.map((item) => ({ t: item.t, n: 1, size: item.j.length })),
    ];
    const left = inFlight ? limitsLeft(limits, { items: inFlight.n, bytes: inFlight.b.length }) : limits;
    const drop = new Set(unitsToDrop(units, left, this.now()));
    if (drop.size === 0) return;
    const gone = new Set<unknown>([...batches, ...this.items].filter((_, index) => drop.has(index)));
    units.forEach((unit, index) => (this.dropped += drop.has(index) ? unit.n : 0));
    this.batches = this.batches.filter((batch) => !gone.has(batch));
    this.items = this.items.filter((item) => !gone.has(item));
  }

  /** Cuts every loose item into batches, each with its key from `keyOf`, and stores them before any is sent. */
  cut(keyOf: () => string): void {
    if (this.items.length === 0) return;
    this.batches.push(...cutBatches(this.items, keyOf));
    this.items = [];
    this.save();
  }

  /** A batch answered (or refused for good) leaves. */
  remove(batch: StoredBatch): void {
    this.batches = this.batches.filter((held) => held !== batch);
    this.save();
  }

  /**
   * Moves the area stored under `key` (a gone tab's, whose lock the caller holds) into this one:
   * its batches keep their keys, so a batch the gone tab had sent is stored once. Written here
   * first, then removed there: a stop in between leaves a copy that is sent again under the same
   * keys, never a loss nor twice.
   */
  takeOver(key: string, limits: QueueLimits, inFlight: StoredBatch | null, keyOf: () => string): void {
    if (!this.storage) return;
    const data = readArea(this.storage, key);
    if (data) {
      // Its loose items are cut into batches there first: from then on each has its key, and a copy
      // left in both areas by a stop halfway is sent under the same keys, stored once.
      const batches = [...data.b, ...cutBatches(data.i, keyOf)];
      if (data.i.length > 0) {
        try {
          this.storage.setItem(key, JSON.stringify({ i: [], b: batches, h: data.h } satisfies AreaData));
        } catch {
          return; // storage full: left as it is, for a later try
        }
      }
      const before = { batches: this.batches, items: this.items, dropped: this.dropped };
      this.batches = [...this.batches, ...batches];
      this.bound(limits, inFlight);
      if (!this.save()) {
        // Not written here (storage full): the gone tab's area stays for a later try, and is not sent from memory.
        Object.assign(this, before);
        return;
      }
    }
    this.storage.removeItem(key);
  }

  /** Writes the area, or removes its key when it is empty, so that storage holds no empty areas; whether it was written. */
  save(): boolean {
    if (!this.writable || !this.storage) return false;
    try {
      if (this.items.length + this.batches.length === 0) this.storage.removeItem(this.key);
      else this.storage.setItem(this.key, JSON.stringify({ i: this.items, b: this.batches, h: this.now() } satisfies AreaData));
      this.failedWrite = false;
      return true;
    } catch (error) {
      // The origin's quota is full (the site's own data): items stay in memory; said once until a write succeeds.
      if (!this.failedWrite) this.onError(`items not stored on the device: ${String(error)}`);
      this.failedWrite = true;
      // An older copy left in storage would be cut again, under new keys, by the next page: sent
      // twice. None is better: what is held is then in memory only, and leaves by beacon.
      this.storage.removeItem(this.key);
      return false;
    }
  }

  /** Forgets everything held, here and in storage. */
  clear(): void {
    this.items = [];
    this.batches = [];
    this.storage?.removeItem(this.key);
  }
}
