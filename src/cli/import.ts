import { stat } from 'node:fs/promises';
import { BatchFailedError, TrackingClient, type ItemResult, type TrackingError } from '@tracking-ingestion/sdk';
import { CliError } from './context.js';
import { kindFields } from './import-columns.js';
import { csvRows } from './import-csv.js';
import { readLines, type Line } from './import-lines.js';
import { HeaderError, mapRow, parseHeader, type Column } from './import-mapping.js';
import { ndjsonRecords } from './import-ndjson.js';
import { importOptions, type ImportFlags, type ImportOptions } from './import-options.js';
import { describeSummary, ImportProgress, itemsDone, itemsPerSecond, type ImportCounts, type ImportSummary } from './import-progress.js';
import { watchReplays } from './import-replays.js';
import type { ImportKind, ImportRecord } from './import-record.js';
import { RejectedLines } from './import-rejects.js';
import { runImport, type BulkSink, type Stopped } from './import-run.js';

/** The service's limit on one item's body: a longer line or CSV record is refused before sending. */
const maxItemBytes = 1024 * 1024;
/** A batch: the bulk endpoints' limits, 100 items and 5 MiB of body. */
const batchLimits = { items: 100, bytes: 5 * 1024 * 1024 };
/**
 * How long a batch is retried: a 429's Retry-After is at most the rest of the 60-second window of
 * the rate limit, and a rolling restart of the service takes seconds; five minutes rides both.
 */
const retryForMs = 5 * 60 * 1000;

/** `tracking import <kind> <file>`: exit code 0 when every item is stored (now or before), 1 otherwise. */
export async function importCommand(args: string[], flags: ImportFlags): Promise<number> {
  const options = importOptions(args, flags, process.env);
  let fileBytes: number;
  try {
    const file = await stat(options.file);
    if (!file.isFile()) throw new Error('not a file');
    fileBytes = file.size;
  } catch (error) {
    throw new CliError(`cannot read ${options.file}: ${error instanceof Error ? error.message : String(error)}`, 2);
  }

  await reachable(options.baseUrl);

  const counts: ImportCounts = { read: 0, accepted: 0, alreadyStored: 0, rejected: 0, failed: 0, bytesRead: 0 };
  const lines = readLines(options.file, { maxLineBytes: maxItemBytes, onBytes: (bytes) => (counts.bytesRead = bytes) });
  const records = options.format === 'csv' ? await csvRecords(options.kind, options.file, lines) : ndjsonRecords(lines);
  const rejects = RejectedLines.beside(options.file);
  const sink = clientSink(options);
  const progress = new ImportProgress(fileBytes, process.stderr.isTTY === true, () => ({ counts, retries: sink.retries() }));
  const started = Date.now();
  let stopped: Stopped | null;
  try {
    stopped = await runImport(records, options.kind, sink, batchLimits, counts, {
      reject: (rejection) => rejects.write(rejection),
    });
  } finally {
    progress.stop();
  }
  const { removedStale } = await rejects.close();
  const seconds = (Date.now() - started) / 1000;
  const summary: ImportSummary = {
    kind: options.kind,
    file: options.file,
    ...counts,
    seconds,
    itemsPerSecond: itemsPerSecond(itemsDone(counts), seconds * 1000),
    rejectedFile: rejects.count > 0 ? rejects.path : null,
    retries: sink.retries(),
    stoppedEarly: stopped === null ? null : `${stopped.reason}${stopped.before === null ? '' : `; lines from ${stopped.before} on were not read`}`,
  };
  if (options.json) console.log(JSON.stringify(summary));
  else {
    console.log(describeSummary(summary));
    if (removedStale) console.log(`nothing rejected: removed ${rejects.path} of an earlier import`);
  }
  return counts.rejected + counts.failed > 0 || stopped !== null ? 1 : 0;
}

/**
 * Fails at once when nothing answers at the URL (a typo, the service not started), where the client
 * would retry every batch for minutes. Any HTTP reply will do: this is no health check.
 */
async function reachable(baseUrl: string): Promise<void> {
  try {
    const reply = await fetch(new URL('/livez', baseUrl), { signal: AbortSignal.timeout(15_000) });
    await reply.body?.cancel();
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : error instanceof Error ? error.message : String(error);
    throw new CliError(`cannot reach the service at ${baseUrl}: ${cause}`);
  }
}

/** The items of a CSV file, mapped by its header; a header that cannot map refuses the file. */
async function csvRecords(kind: ImportKind, file: string, lines: AsyncGenerator<Line>): Promise<AsyncIterable<ImportRecord>> {
  const rows = csvRows(lines, maxItemBytes);
  const first = await rows.next();
  if (first.done) throw new CliError('the CSV file is empty: it needs a header row', 2);
  const header = first.value;
  if ('unclosed' in header) throw new CliError(`${file}: ${header.unclosed}`, 2);
  if ('problem' in header) throw new CliError(`the header (line ${header.line}) is not a CSV record: ${header.problem}`, 2);
  const fields = kindFields(kind);
  let columns: Column[];
  try {
    columns = parseHeader(fields, header.cells);
  } catch (error) {
    if (error instanceof HeaderError) throw new CliError(`${error.message} (header, line ${header.line})`, 2);
    throw error;
  }
  return (async function* (): AsyncGenerator<ImportRecord> {
    for await (const row of rows) {
      if ('unclosed' in row) {
        yield { line: row.line, stop: `${file}: ${row.unclosed}; nothing from line ${row.line} on is imported` };
        return;
      }
      if ('problem' in row) {
        yield { line: row.line, problem: row.problem, input: row.raw };
        continue;
      }
      const mapped = mapRow(fields, columns, row.cells);
      yield 'problem' in mapped ? { line: row.line, problem: mapped.problem, input: row.raw } : { line: row.line, item: mapped.item };
    }
  })();
}

/**
 * The SDK client for the import, one bulk request at a time under the key the importer gives:
 * batches are cut by the importer (flushIntervalMs 0: never by time). A key bound to another body
 * (422) is a conflict for the importer to resolve; any other batch that fails for good (refused
 * whole, or not delivered within the retry budget) stops the import: the next would too.
 */
function clientSink(options: ImportOptions): BulkSink & { retries(): number } {
  const failedBatches = new Set<string>();
  let stop: string | null = null;
  let request: { key: string; items: number; conflict: boolean } | null = null;
  const replays = watchReplays(globalThis.fetch);
  const client = new TrackingClient({
    baseUrl: options.baseUrl,
    licenseCode: options.licenseCode,
    accessToken: options.accessToken,
    flushAt: batchLimits.items,
    flushIntervalMs: 0,
    maxBatchBytes: batchLimits.bytes,
    retryForMs,
    fetch: replays.fetch,
    idempotencyKey: (batch) => {
      // The client cuts the importer's batch as it is (same limits); anything else is a bug.
      if (request?.items !== batch.items.length) throw new Error(`a batch of ${batch.items.length} items where the import cut ${request?.items ?? 0}`);
      return request.key;
    },
    onError: (error: TrackingError) => {
      if (!(error instanceof BatchFailedError)) return;
      if (error.status === 422 && request) {
        request.conflict = true;
        return;
      }
      failedBatches.add(error.message);
      stop ??= error.message;
    },
  });
  return {
    post: async (items, key) => {
      request = { key, items: items.length, conflict: false };
      const results = items.map((item) => client.send(options.kind, item));
      await client.flush();
      const settled = await Promise.all(
        results.map((result) => result.catch((error: unknown): ItemResult => ({ status: 'error', message: error instanceof Error ? error.message : String(error) }))),
      );
      const replayed = replays.take(key);
      return request.conflict ? 'conflict' : { results: settled, replayed };
    },
    failedBatch: (message) => failedBatches.has(message),
    stopReason: () => stop,
    retries: () => client.stats().retried,
  };
}
