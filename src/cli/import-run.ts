import type { ItemResult } from '@tracking-ingestion/sdk';
import type { ImportCounts } from './import-progress.js';
import type { ImportRecord } from './import-record.js';
import type { Rejection } from './import-rejects.js';

/** Where the items go: the client's `send` for the import's kind, and its `flush`. */
export interface ItemSink {
  send(item: Record<string, unknown>): Promise<ItemResult>;
  flush(): Promise<void>;
  /** Whether an error result is a batch that failed for good (not the item's own rejection). */
  failedBatch(message: string): boolean;
  /** Why the rest of the file is not worth sending (a batch failed for good), once that happened. */
  stopReason(): string | null;
}

export interface RunHooks {
  reject(rejection: Rejection): Promise<void>;
}

/**
 * Items sent and not yet settled. It must hold more than a batch (100 items, 5 MiB of JSON): a
 * batch is cut only when full, so while the oldest item held waits for its batch, the items
 * after it are needed to fill that batch.
 */
export interface Window {
  items: number;
  bytes: number;
}

interface Held {
  line: number;
  item: Record<string, unknown>;
  bytes: number;
  result: Promise<ItemResult>;
  /** The result once settled, for a look without waiting. */
  settled(): ItemResult | null;
}

/** A send's result: a call the client refused (it throws for no reply of the service) is an error result. */
function settling(sent: Promise<ItemResult>): Pick<Held, 'result' | 'settled'> {
  let settled: ItemResult | null = null;
  const result = sent
    .catch((error: unknown): ItemResult => ({ status: 'error', message: error instanceof Error ? error.message : String(error) }))
    .then((value) => (settled = value));
  return { result, settled: () => settled };
}

/**
 * Sends the records' items through `sink` with backpressure: at most `window` items and bytes are
 * sent and unsettled; the next record is read only after the oldest has settled. Results are
 * taken in order; rejections are handed to `hooks.reject` (records that are not items at once).
 * Returns the line it stopped before when the sink said to stop, or null when it read the whole file.
 */
export async function runImport(
  records: AsyncIterable<ImportRecord>,
  sink: ItemSink,
  window: Window,
  counts: ImportCounts,
  hooks: RunHooks,
): Promise<number | null> {
  const held: Held[] = [];
  let heldBytes = 0;

  const take = async (entry: Held, result: ItemResult, failed = false): Promise<void> => {
    heldBytes -= entry.bytes;
    if (result.status === 'queued') counts.accepted += 1;
    else {
      if (failed || sink.failedBatch(result.message)) counts.failed += 1;
      else counts.rejected += 1;
      await hooks.reject({ line: entry.line, message: result.message, item: entry.item });
    }
  };

  /**
   * After the sink said to stop: the items already settled are taken as they are, the others are
   * failed without waiting (their batches would each wait out the retry budget). They may still be
   * stored; a second run of the import stores them at most once.
   */
  const abandon = async (reason: string): Promise<void> => {
    for (let oldest = held.shift(); oldest; oldest = held.shift()) {
      const settled = oldest.settled();
      if (settled) await take(oldest, settled);
      else await take(oldest, { status: 'error', message: `not confirmed: the import stopped (${reason})` }, true);
    }
  };

  for await (const record of records) {
    const stop = sink.stopReason();
    if (stop !== null) {
      await abandon(stop);
      return record.line;
    }
    counts.read += 1;
    if ('problem' in record) {
      counts.rejected += 1;
      await hooks.reject({ line: record.line, message: record.problem, input: record.input });
      continue;
    }
    const json = JSON.stringify(record.item);
    const bytes = Buffer.byteLength(json);
    held.push({ line: record.line, item: record.item, bytes, ...settling(sink.send(record.item)) });
    heldBytes += bytes;
    while ((held.length >= window.items || heldBytes >= window.bytes) && sink.stopReason() === null) {
      const oldest = held.shift() as Held;
      await take(oldest, await oldest.result);
    }
  }
  // The last batch is not full: flush cuts it. Its settling is followed through the items held.
  const flushed = sink.flush();
  for (let oldest = held.shift(); oldest; oldest = held.shift()) {
    const stop = sink.stopReason();
    if (stop !== null) {
      held.unshift(oldest);
      await abandon(stop);
      return null;
    }
    await take(oldest, await oldest.result);
  }
  await flushed;
  return null;
}
