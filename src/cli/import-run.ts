import type { ItemResult } from '@tracking-ingestion/sdk';
import { importKeys, lastBatchPieces, probeSizes, type ImportKeys } from './import-keys.js';
import type { ImportCounts } from './import-progress.js';
import type { ImportKind, ImportRecord } from './import-record.js';
import type { Rejection } from './import-rejects.js';

/**
 * A bulk request's reply: a result per item, and whether the service replayed the reply it recorded
 * for an earlier request with the same key and items (they were stored then, nothing now).
 */
export interface BulkReply {
  results: ItemResult[];
  replayed: boolean;
}

/** Where the items go: one bulk request at a time, under the key given. */
export interface BulkSink {
  /** The reply to `items` sent as one bulk request, or 'conflict' when `key` is bound to other items (422). */
  post(items: Record<string, unknown>[], key: string): Promise<BulkReply | 'conflict'>;
  /** Whether an error result is a batch that failed for good (not the item's own rejection). */
  failedBatch(message: string): boolean;
  /** Why the rest of the file is not worth sending (a batch failed for good), once that happened. */
  stopReason(): string | null;
}

export interface RunHooks {
  reject(rejection: Rejection): Promise<void>;
}

/** A batch: at most `items` items and a JSON array body of at most `bytes` bytes. */
export interface BatchLimits {
  items: number;
  bytes: number;
}

/** How an import ended early: why, and the line it stopped before (null when it read the file to its end). */
export interface Stopped {
  reason: string;
  before: number | null;
}

/** A record of a batch, in the file's order: an item to send, or a line already known bad. */
type Entry = { line: number; item: Record<string, unknown> } | { line: number; problem: string; input: string };

/** An item's result, and whether it came in a replayed reply. */
interface Outcome {
  result: ItemResult;
  replayed: boolean;
}

/**
 * Sends the records' items through `sink` in batches cut by count and bytes only, one request in
 * flight while the next batch is read, and takes their results in the file's order: rejections go
 * to `hooks.reject`. Memory holds two batches. Returns why it stopped early, or null.
 */
export async function runImport(
  records: AsyncIterable<ImportRecord>,
  kind: ImportKind,
  sink: BulkSink,
  limits: BatchLimits,
  counts: ImportCounts,
  hooks: RunHooks,
): Promise<Stopped | null> {
  let keys: ImportKeys | null = null;
  let entries: Entry[] = [];
  let itemCount = 0;
  let bodyBytes = 2;
  let batches = 0;
  let sending: Promise<void> = Promise.resolve();

  /** Hands the batch read so far to the sender, once the one before it is done. */
  const cut = async (last: boolean): Promise<void> => {
    const batch = entries;
    const number = itemCount > 0 ? batches++ : -1;
    entries = [];
    itemCount = 0;
    bodyBytes = 2;
    await sending;
    sending = settleBatch(batch, number, last && keys !== null ? 'last' : 'full');
  };

  const settleBatch = async (batch: Entry[], number: number, shape: 'full' | 'last'): Promise<void> => {
    const items = batch.flatMap((entry) => ('item' in entry ? [entry.item] : []));
    const results = keys && items.length > 0 ? await sendBatch(sink, keys, number, items, shape === 'last' && items.length < limits.items) : [];
    let index = 0;
    for (const entry of batch) {
      if (!('item' in entry)) {
        counts.rejected += 1;
        await hooks.reject({ line: entry.line, message: entry.problem, input: entry.input });
        continue;
      }
      const { result, replayed } = results[index++] ?? { result: notSent(sink), replayed: false };
      if (result.status === 'queued') {
        if (replayed) counts.alreadyStored += 1;
        else counts.accepted += 1;
      } else {
        if (sink.failedBatch(result.message) || result.message.startsWith('not sent:')) counts.failed += 1;
        else counts.rejected += 1;
        await hooks.reject({ line: entry.line, message: result.message, item: entry.item });
      }
    }
  };

  const finish = async (stopped: Stopped | null): Promise<Stopped | null> => {
    await cut(true);
    await sending;
    const reason = sink.stopReason();
    return stopped ?? (reason === null ? null : { reason, before: null });
  };

  for await (const record of records) {
    const reason = sink.stopReason();
    if (reason !== null) {
      // The batch being read is not sent: cut as the last, it fails as not sent.
      return finish({ reason, before: record.line });
    }
    if ('stop' in record) return finish({ reason: record.stop, before: null });
    counts.read += 1;
    if ('problem' in record) {
      entries.push(record);
      continue;
    }
    const bytes = Buffer.byteLength(JSON.stringify(record.item));
    if (itemCount > 0 && bodyBytes + 1 + bytes > limits.bytes) await cut(false);
    keys ??= importKeys(kind, record.item);
    entries.push(record);
    bodyBytes += (itemCount > 0 ? 1 : 0) + bytes;
    itemCount += 1;
    if (itemCount >= limits.items) await cut(false);
  }
  return finish(null);
}

const notSent = (sink: BulkSink): ItemResult => ({ status: 'error', message: `not sent: the import stopped (${sink.stopReason() ?? 'unknown'})` });

/**
 * The results of batch `number`'s items, sent under the keys of their places. A last batch that is
 * not full is sent in pieces (lastBatchPieces), so that an import of a longer copy of the file
 * finds them: every body an import binds to a key is a power of two of items, or the rest of a full
 * batch. Items not sent because the sink stopped have no result.
 */
async function sendBatch(sink: BulkSink, keys: ImportKeys, number: number, items: Record<string, unknown>[], partial: boolean): Promise<Outcome[]> {
  const results: Outcome[] = [];
  const post = async (start: number, end: number, key: string): Promise<boolean> => {
    const reply = await sink.post(items.slice(start, end), key);
    if (reply === 'conflict') return false;
    for (const [index, result] of reply.results.entries()) results[start + index] = { result, replayed: reply.replayed };
    return true;
  };
  let offset = 0;
  while (offset < items.length && sink.stopReason() === null) {
    const remaining = items.length - offset;
    const size = partial ? (lastBatchPieces(remaining)[0]?.[1] ?? remaining) : remaining;
    const key = keys.at(number, offset);
    if (await post(offset, offset + size, key)) {
      offset += size;
      continue;
    }
    // The key is bound to other items: those an earlier import of a shorter (or longer) copy sent
    // from here, or of an edited file (then none of these sizes matches).
    let found = 0;
    for (const probe of probeSizes(remaining + 1)) {
      if (sink.stopReason() !== null) break;
      if (probe !== size && (await post(offset, offset + probe, key))) {
        found = probe;
        break;
      }
    }
    if (found > 0) {
      offset += found;
      continue;
    }
    if (sink.stopReason() !== null) break;
    const content = keys.ofContent(number, offset, items.slice(offset));
    if (!(await post(offset, items.length, content))) {
      const message = 'not stored: the Idempotency-Key of these items is bound to another body';
      for (let index = offset; index < items.length; index += 1) results[index] = { result: { status: 'error', message }, replayed: false };
    }
    break;
  }
  return results;
}
