import { open, rename, rm, stat } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import { AppError } from '../errors.js';
import type { EventStore } from '../eventstore/port.js';
import { exportParamsOf, type ExportParams } from '../export/params.js';
import { streamSink, writeExport, type ExportProgress, type ExportSink } from '../export/write.js';
import { accountArgument, CliError, withContext } from './context.js';
import { resumeState, saveState, stateFileOf } from './export-file.js';

export const exportUsage =
  'usage: tracking export --account <license|id> [--out <file>] [--format ndjson|csv|parquet] [--kind <kind>] [--name <eventName>] [--user <id>] [--time received|event] [--from <date>] [--to <date>] [--after <cursor>]';

/** The options that choose what is exported: a file is continued only with the same ones. */
export const exportOptionNames = ['format', 'kind', 'name', 'user', 'time', 'from', 'to'] as const;

export interface ExportOptions {
  account?: string;
  out?: string;
  after?: string;
  /** The export's own options, by the names of the read API's query (docs/export.md). */
  params: Partial<Record<(typeof exportOptionNames)[number], string>>;
}

/** The read API's rules for these options: a wrong one is a usage error naming it. */
function paramsOf(options: ExportOptions, store: EventStore, after: string | undefined): ExportParams {
  const given: Record<string, string | undefined> = { ...options.params, after };
  try {
    return exportParamsOf((name) => given[name], store);
  } catch (error) {
    if (error instanceof AppError) throw new CliError(`${error.message.replace(/^(\w+)/, '--$1')}\n${exportUsage}`, 2);
    throw error;
  }
}

/** A bar on stderr when it is a terminal: events written of those there were at the start, and the rate. */
function progressBar(atStart: number): { update(progress: ExportProgress): void; stop(): void } {
  let total = atStart;
  if (!process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    { format: '[{bar}] {percentage}% | {value}/{total} events read | {written} written | {rate}/s | ETA {eta_formatted}', hideCursor: true, etaBuffer: 20, stream: process.stderr },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  bar.start(Math.max(total, 1), 0, { written: 0, rate: 0 });
  return {
    update(progress: ExportProgress): void {
      const seconds = (Date.now() - started) / 1000;
      // Events stored since the start are read too: the total grows with them.
      if (progress.read > total) {
        total = progress.read;
        bar.setTotal(total);
      }
      bar.update(progress.read, { written: progress.events, rate: seconds > 0 ? Math.round(progress.read / seconds) : 0 });
    },
    stop: () => bar.stop(),
  };
}

/** stdout as a sink; a reader that goes away (`| head`) ends the export quietly, as other commands do. */
function stdoutSink(): ExportSink {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
  });
  return streamSink(process.stdout);
}

/** Writes a file under a temporary name, renamed to `file` once whole; refuses a `file` that exists. */
async function writeWhole(file: string, work: (sink: ExportSink) => Promise<ExportProgress>): Promise<ExportProgress> {
  if (await stat(file).then(() => true, () => false)) throw new CliError(`${file} exists: a Parquet export is written whole, to a new file; give another --out, or delete it`);
  const partial = `${file}.partial`;
  const handle = await open(partial, 'w');
  try {
    const done = await work({ write: async (chunk) => void (await handle.write(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk)) });
    await handle.sync();
    await handle.close();
    await rename(partial, file);
    return done;
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(partial, { force: true });
    throw error;
  }
}

/**
 * `tracking export`: the account's events, as the read API's export gives them, to a file or
 * stdout. To a file, it continues where an earlier run on that file stopped (export-file.ts).
 */
export async function exportCommand(args: string[], options: ExportOptions): Promise<void> {
  if (args.length > 0 || !options.account) throw new CliError(exportUsage, 2);
  const account = options.account;
  // The format by its name, given or not: a file continues with `--format ndjson` or without it.
  const given: Record<string, string | undefined> = { ...options.params, format: options.params.format ?? 'ndjson', after: options.after };
  // --after too: the same command continues the file, from where it stands.
  const chosen = Object.fromEntries(Object.entries(given).flatMap(([name, value]) => (value === undefined ? [] : [[name, value]])));
  await withContext(async ({ pool, store }) => {
    const found = await accountArgument(pool, account);
    const parquet = options.params.format === 'parquet';
    // A Parquet file is readable only whole: it is written beside its name and renamed once done.
    const state = options.out === undefined || parquet ? null : await resumeState(options.out, chosen);
    const params = paramsOf(options, store, state?.cursor ?? options.after);
    // A file whose state counts no byte yet has not had its header either.
    const request = { accountId: found.id, ...params, header: params.header && !(state && state.bytes > 0) };
    const { events: total } = await store.backlog(params.after, { accountId: found.id });
    const bar = progressBar(total);
    const started = Date.now();
    const onPage = (progress: ExportProgress): void => bar.update(progress);
    const exportTo = async (): Promise<ExportProgress> => {
      if (options.out === undefined) return writeExport(store, stdoutSink(), request, onPage);
      if (parquet) return writeWhole(options.out, (sink) => writeExport(store, sink, request, onPage));
      const file = options.out;
      // The state first: a run killed at any moment after this leaves a file the next one continues.
      if (!state) await saveState(file, { bytes: 0, cursor: options.after ?? null, options: chosen });
      const handle = await open(file, 'a');
      let bytes = state?.bytes ?? 0;
      const sink: ExportSink = {
        async write(chunk: string | Uint8Array): Promise<void> {
          const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
          const { bytesWritten } = await handle.write(data);
          if (bytesWritten !== data.length) throw new Error(`${file}: ${bytesWritten} of ${data.length} bytes written (is the disk full?)`);
          bytes += data.length;
        },
      };
      try {
        const done = await writeExport(store, sink, request, async (progress) => {
          await saveState(file, { bytes, cursor: progress.cursor, options: chosen });
          onPage(progress);
        });
        await handle.sync();
        return done;
      } finally {
        await handle.close();
      }
    };
    let done: ExportProgress;
    try {
      done = await exportTo();
    } finally {
      bar.stop();
    }
    const seconds = (Date.now() - started) / 1000;
    const where = options.out === undefined ? 'stdout' : options.out;
    process.stderr.write(
      `tracking: exported ${done.events} events of ${found.licenseCode} to ${where} in ${seconds.toFixed(1)} s` +
        (options.out === undefined || parquet
          ? `; continue later with --after ${done.cursor ?? '(none: nothing was read)'}\n`
          : `; the same command continues it with the events stored since (${stateFileOf(options.out)})\n`),
    );
  });
}
