import type { ItemKind } from '../types.js';

/** An item as queued and stored: its kind, when it was queued, its JSON. Short names: they are stored. */
export interface QueuedItem {
  k: ItemKind;
  t: number;
  j: string;
}

/** A batch as stored: cut once, with its Idempotency-Key, and sent with that same key and body until answered. */
export interface StoredBatch {
  k: ItemKind;
  /** The Idempotency-Key. */
  id: string;
  /** When its oldest item was queued. */
  t: number;
  /** Items in it. */
  n: number;
  /** The body: a JSON array of the items. */
  b: string;
  /**
   * 1 once a leaving page sent it by beacon: later pages send it again only by fetch, for a reply,
   * so that a visitor hopping through pages does not beacon the whole queue at each hop.
   */
  s?: 1;
}

/** A bulk body's limits: the endpoints take 100 items; 60 KiB leaves room in the 64 KiB that a page's beacons share. */
export const maxBatchItems = 100;
export const maxBatchBytes = 60 * 1024;

/** UTF-8 bytes of a text: what goes on the wire. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    // Two bytes below 0x800, three above; a surrogate pair is four: three for its first half, one for its second.
    if (code >= 0x80) bytes += code < 0x800 ? 1 : code >= 0xdc00 && code < 0xe000 ? 0 : 2;
  }
  return bytes;
}

/** Whether one item can ever be sent: alone in a batch, within its byte limit. */
export function fitsOneBatch(json: string): boolean {
  return utf8Length(json) + 2 <= maxBatchBytes;
}

/**
 * Why the service would refuse an item whole, or null: its shape limits (docs/decisions.md, Limits)
 * refuse the whole bulk request, so an item past them is kept out of every batch, lest it take the
 * good items of its batch down with it. `value` is the item as JSON.parse gives it back.
 */
export function shapeProblem(value: unknown): string | null {
  let values = 0;
  let containers = 0;
  const stack: [unknown, number][] = [[value, 1]];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const [node, depth] = next;
    values += 1;
    if (node === null || typeof node !== 'object') continue;
    containers += 1;
    if (depth > 64) return 'nested deeper than 64 levels';
    for (const [key, child] of Object.entries(node)) {
      // An object's key counts as a value, as the service counts them.
      if (!Array.isArray(node) && key !== undefined) values += 1;
      stack.push([child, depth + 1]);
    }
  }
  if (values > 10_000) return `${values} JSON values, more than 10,000`;
  if (containers > 1_000) return `${containers} objects and arrays, more than 1,000`;
  return null;
}

/**
 * Cuts items into batches of consecutive items of one kind, each at most maxBatchItems and
 * maxBatchBytes, in order; `keyOf` gives each its Idempotency-Key. Every item fits a batch
 * (`fitsOneBatch` is checked when an item is queued).
 */
export function cutBatches(items: readonly QueuedItem[], keyOf: () => string): StoredBatch[] {
  const batches: StoredBatch[] = [];
  let run: QueuedItem[] = [];
  let bytes = 0;
  const close = (): void => {
    const first = run[0];
    if (first) batches.push({ k: first.k, id: keyOf(), t: first.t, n: run.length, b: `[${run.map((item) => item.j).join(',')}]` });
    run = [];
    bytes = 1;
  };
  close();
  for (const item of items) {
    const size = utf8Length(item.j) + 1;
    if (run.length > 0 && (run[0]?.k !== item.k || run.length >= maxBatchItems || bytes + size > maxBatchBytes)) close();
    run.push(item);
    bytes += size;
  }
  close();
  return batches;
}
