import type { Logger } from '../../src/logger.js';

const minRetryMs = 100;
const maxRetryMs = 5_000;
/** While failures go on, how often a warning counts them. */
const failureWarningEveryMs = 60_000;

/**
 * A projection worker's run of failures: how long to wait before each next attempt, and what to
 * log. The first failure of a run is a warning with its cause; the attempts after it are debug
 * lines, with a warning that counts them once a minute: a database away for an hour is not a stack
 * trace per attempt.
 */
export class FailureBackoff {
  private failuresInRow = 0;
  private lastFailureWarning = 0;

  constructor(private readonly log: Logger) {}

  /** Logs a failure of the attempt under way. */
  report(error: unknown): void {
    const now = Date.now();
    const retryInMs = this.retryDelay();
    if (this.failuresInRow === 0) {
      this.lastFailureWarning = now;
      this.log.warn({ err: error, retryInMs }, 'projection worker interrupted; starting again');
    } else if (now - this.lastFailureWarning >= failureWarningEveryMs) {
      this.lastFailureWarning = now;
      const reason = error instanceof Error ? error.message : String(error);
      this.log.warn({ attempts: this.failuresInRow + 1, reason, retryInMs }, 'projection worker still interrupted');
    } else {
      this.log.debug({ err: error, retryInMs }, 'projection worker still interrupted');
    }
  }

  /** How long to wait before the next attempt: 100 ms after a first failure, doubling up to 5 s while the failures go on. */
  retryDelay(): number {
    return Math.min(maxRetryMs, minRetryMs * 2 ** this.failuresInRow);
  }

  /** The wait is over: the next attempt starts. */
  retrying(): void {
    this.failuresInRow += 1;
  }

  /** A batch read or applied: a run of failures, if any, is over. */
  recovered(): void {
    if (this.failuresInRow > 0) this.log.info({ attempts: this.failuresInRow }, 'projection worker running again');
    this.failuresInRow = 0;
  }
}
