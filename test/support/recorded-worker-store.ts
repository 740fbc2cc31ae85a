import type { WorkerStore } from '../../projections/runner/worker.js';

/**
 * A projection worker's store that notes, while `recording`, the catch-up reads it is asked for
 * (the account each reads, or every account) and the discovery scans: what a worker does, seen
 * from what it asks.
 */
export class RecordedWorkerStore {
  reads: string[] = [];
  scans = 0;
  recording = false;

  /** `inner`, noted. */
  store(inner: WorkerStore): WorkerStore {
    return {
      readAll: (checkpoint, limit, filter) => {
        if (this.recording) this.reads.push(filter?.accountId ?? '(every account)');
        return inner.readAll(checkpoint, limit, filter);
      },
      backlog: (...args) => inner.backlog(...args),
      scanAccounts: (...args) => {
        if (this.recording) this.scans += 1;
        return inner.scanAccounts(...args);
      },
      comparePositions: (a, b) => inner.comparePositions(a, b),
      ...(inner.mayRepeatEventIds !== undefined && { mayRepeatEventIds: inner.mayRepeatEventIds }),
    };
  }
}
