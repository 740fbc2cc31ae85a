import type { FeedWaits } from './feed.js';

/**
 * The long polls of the feed waiting for their account's appends. The process tells it of each
 * committed append (`appended`); a poll also ends after its time, to look for the appends of other
 * processes.
 */
export class AppendWaits implements FeedWaits {
  private readonly waiting = new Map<string, Set<() => void>>();
  private stoppedNow = false;

  get stopped(): boolean {
    return this.stoppedNow;
  }

  /** Ends every wait, and those to come at once: the process is stopping. */
  stop(): void {
    this.stoppedNow = true;
    for (const wakes of [...this.waiting.values()]) for (const wake of [...wakes]) wake();
  }

  appended(accountIds: readonly string[]): void {
    for (const accountId of accountIds) {
      const wakes = this.waiting.get(accountId);
      if (wakes) for (const wake of [...wakes]) wake();
    }
  }

  next(accountId: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wakes = this.waiting.get(accountId) ?? new Set<() => void>();
      this.waiting.set(accountId, wakes);
      const timer = setTimeout(() => wake(), ms);
      const wake = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', wake);
        wakes.delete(wake);
        if (wakes.size === 0 && this.waiting.get(accountId) === wakes) this.waiting.delete(accountId);
        resolve();
      };
      wakes.add(wake);
      signal.addEventListener('abort', wake, { once: true });
      if (signal.aborted || this.stoppedNow) wake();
    });
  }
}
