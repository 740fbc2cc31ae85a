import { createHash } from 'node:crypto';
import type { ImportKind } from './import-record.js';

/**
 * The Idempotency-Keys of an import. A request's key names where its items start in the file, not
 * what they are: the file (its first item, which a truncated copy of the file shares), the batch's
 * number among the file's batches and the item's place in it. Batches are cut by count and bytes
 * only, so a file and any truncated copy of it cut the same batches up to where the copy ends;
 * only the last batch of the copy holds fewer items. The service binds a key to the body it was
 * first sent with (another body gets 422): a request whose key is bound to other items finds which
 * of them were stored before by sending prefixes of its items under the same key (`probeSizes`),
 * the one that matches getting its recorded reply. See docs/importing.md.
 */
export interface ImportKeys {
  /** The key of a request whose items start at `offset` of batch `batch`. */
  at(batch: number, offset: number): string;
  /** The key of items that no earlier import sent from that place: derived from the items too. */
  ofContent(batch: number, offset: number, items: readonly Record<string, unknown>[]): string;
}

export function importKeys(kind: ImportKind, firstItem: Record<string, unknown>): ImportKeys {
  const file = createHash('sha256').update(JSON.stringify(firstItem)).digest('hex');
  const key = (parts: string[]): string => {
    const hash = createHash('sha256').update(`tracking import\n${kind}\n${file}\n`);
    for (const part of parts) hash.update(`${part}\n`);
    return `import-${hash.digest('hex')}`;
  };
  return {
    at: (batch, offset) => key([String(batch), String(offset)]),
    ofContent: (batch, offset, items) => key([String(batch), String(offset), 'content', ...items.map((item) => JSON.stringify(item))]),
  };
}

/**
 * How the last batch of a file is sent when it is not full (the file may be a truncated copy):
 * as requests of 64, 32, 16, ... items (the binary digits of its count less one), then its last item
 * alone (a file cut inside its last line reads that line as another item). An import of the
 * whole file later finds each of them by trying those sizes only. Ranges [start, end).
 */
export function lastBatchPieces(count: number): [number, number][] {
  const pieces: [number, number][] = [];
  let start = 0;
  for (let size = powerOfTwoBelow(count); size >= 1; size /= 2) {
    if (count - 1 - start >= size) {
      pieces.push([start, start + size]);
      start += size;
    }
  }
  if (count > 0) pieces.push([start, count]);
  return pieces;
}

/** The prefix sizes to try, largest first, when a key is bound to items other than `remaining`. */
export function probeSizes(remaining: number): number[] {
  const sizes: number[] = [];
  for (let size = powerOfTwoBelow(remaining); size >= 1; size /= 2) sizes.push(size);
  return sizes;
}

/** The largest power of two less than `n` (0 for n ≤ 1). */
function powerOfTwoBelow(n: number): number {
  if (n <= 1) return 0;
  let size = 1;
  while (size * 2 < n) size *= 2;
  return size;
}
