import cliProgress from 'cli-progress';

/** What an import has done so far. */
export interface ImportCounts {
  /** Records read: lines of an NDJSON file, rows of a CSV (blank lines and the header not counted). */
  read: number;
  /** Stored by this run: new to the service. */
  accepted: number;
  /** Stored by an earlier import: the service replayed its reply to the same request (same Idempotency-Key and items). */
  alreadyStored: number;
  /** Refused for their content: not parseable, not mappable, or a 400 element of the service. */
  rejected: number;
  /** Not stored for another reason (the service unreachable, a batch refused whole). */
  failed: number;
  bytesRead: number;
}

export interface ImportSummary extends ImportCounts {
  kind: string;
  file: string;
  seconds: number;
  itemsPerSecond: number;
  /** The rejected-lines file, when anything was rejected or failed. */
  rejectedFile: string | null;
  /** Requests sent again after a 429, a 5xx or no reply (the client waits as Retry-After asks). */
  retries: number;
  /** Why the import stopped before the end of the file, if it did. */
  stoppedEarly: string | null;
}

const refreshEveryMs = 200;

/** What the bar shows: the counts, and requests sent again (which explain a stall: a rate limit's wait). */
export type ProgressSource = () => { counts: ImportCounts; retries: number };

/** Items the service answered for: stored now or before, or refused. */
export function itemsDone(counts: ImportCounts): number {
  return counts.accepted + counts.alreadyStored + counts.rejected + counts.failed;
}

/**
 * A progress bar on stderr while the import runs, when stderr is a terminal: share of the file
 * read (its ETA is by bytes), items per second, new, already stored, rejected and requests sent again,
 * refreshed on a timer so that a wait shows too. Otherwise it shows nothing.
 */
export class ImportProgress {
  private readonly bar: cliProgress.SingleBar | null;
  private readonly started = Date.now();
  private readonly timer: NodeJS.Timeout | null;

  constructor(
    fileBytes: number,
    show: boolean,
    private readonly source: ProgressSource,
  ) {
    this.bar = show
      ? new cliProgress.SingleBar(
          {
            format:
              '[{bar}] {percentage}% | {read} items, {rate}/s | new {accepted} | already stored {alreadyStored} | rejected {rejected} | retries {retries} | ETA {eta_formatted}',
            hideCursor: true,
            etaBuffer: 50,
            stream: process.stderr,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
    this.bar?.start(Math.max(fileBytes, 1), 0, { read: 0, rate: 0, accepted: 0, alreadyStored: 0, rejected: 0, retries: 0 });
    this.timer = this.bar ? setInterval(() => this.render(), refreshEveryMs).unref() : null;
  }

  private render(): void {
    const { counts, retries } = this.source();
    this.bar?.update(counts.bytesRead, {
      read: counts.read,
      rate: Math.round(itemsPerSecond(itemsDone(counts), Date.now() - this.started)),
      accepted: counts.accepted,
      alreadyStored: counts.alreadyStored,
      rejected: counts.rejected + counts.failed,
      retries,
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.render();
    this.bar?.stop();
  }
}

export function itemsPerSecond(items: number, ms: number): number {
  return ms > 0 ? (items * 1000) / ms : 0;
}

/** The summary line printed when the import ends. */
export function describeSummary(s: ImportSummary): string {
  const parts = [`${s.kind} from ${s.file}: ${s.read} read, ${s.accepted} newly accepted, ${s.alreadyStored} already stored, ${s.rejected} rejected`];
  if (s.failed > 0) parts.push(`, ${s.failed} failed`);
  parts.push(` in ${s.seconds.toFixed(1)} s (${Math.round(s.itemsPerSecond)} items/s)`);
  if (s.retries > 0) parts.push(`; ${s.retries} request${s.retries === 1 ? '' : 's'} sent again (rate limit, or the service unavailable)`);
  if (s.stoppedEarly) parts.push(`\nstopped early: ${s.stoppedEarly}`);
  if (s.rejectedFile) parts.push(`\nrejected lines and why: ${s.rejectedFile}`);
  return parts.join('');
}
