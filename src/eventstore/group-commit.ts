/**
 * Group commit: callers submit units of work; units that arrive while a flush is running are
 * collected and flushed together, so a busy server writes many units per transaction. Each caller
 * is settled only after the flush that carried its unit has finished.
 *
 * With `keysOf` (an append's streams), a unit whose keys a running flush holds waits for that
 * flush, and so does every later unit sharing a key with it, while units of other keys go ahead.
 * Concurrent flushes then never hold a key in common: in PostgreSQL they neither wait for each
 * other's stream locks (which made them commit one after the other, each with its own WAL flush,
 * instead of together) nor find a stream's head moved under them; and a key's units are flushed
 * in the order they were submitted.
 */
export interface GroupCommitOptions<Unit, Result> {
  /**
   * Writes several units at once and returns one outcome per unit, in order. A rejection fails
   * every unit of the batch; a per-unit 'rejected' outcome fails that unit alone.
   */
  flush(units: Unit[]): Promise<PromiseSettledResult<Result>[]>;
  /** Size of a unit, counted against maxBatchSize (for example its number of events). */
  sizeOf(unit: Unit): number;
  maxBatchSize: number;
  /** Bytes of a unit, counted against maxBatchBytes; a batch always takes its first unit. */
  bytesOf?(unit: Unit): number;
  maxBatchBytes?: number;
  /** How many flushes may run at once (each uses its own connection). */
  maxConcurrentFlushes: number;
  /** What a unit writes to that no two flushes may write to at once (an append's streams). */
  keysOf?(unit: Unit): readonly string[];
}

interface Pending<Unit, Result> {
  unit: Unit;
  keys: readonly string[];
  resolve(result: Result): void;
  reject(error: unknown): void;
}

export class GroupCommitter<Unit, Result> {
  private queue: Pending<Unit, Result>[] = [];
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  /** The keys of the running flushes. */
  private readonly held = new Set<string>();

  constructor(private readonly options: GroupCommitOptions<Unit, Result>) {}

  submit(unit: Unit): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ unit, keys: this.options.keysOf?.(unit) ?? [], resolve, reject });
      this.pump();
    });
  }

  /** Resolves once nothing is queued or in flight. */
  async drain(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.options.maxConcurrentFlushes && this.queue.length > 0) {
      const batch = this.takeBatch();
      // Every queued unit waits for a key a running flush holds: its end pumps again.
      if (batch.length === 0) return;
      this.running += 1;
      void this.runBatch(batch);
    }
  }

  /**
   * The next batch, in submission order: units up to the bounds, skipping those that share a key
   * with a running flush or with a unit skipped before them (so a key's units keep their order).
   */
  private takeBatch(): Pending<Unit, Result>[] {
    const { sizeOf, bytesOf, maxBatchSize, maxBatchBytes = Infinity } = this.options;
    const waiting = new Set<string>();
    const blocked = (keys: readonly string[]): boolean => keys.some((key) => this.held.has(key) || waiting.has(key));
    const batch: Pending<Unit, Result>[] = [];
    const left: Pending<Unit, Result>[] = [];
    let size = 0;
    let bytes = 0;
    let full = false;
    for (const pending of this.queue) {
      if (full || blocked(pending.keys)) {
        for (const key of pending.keys) waiting.add(key);
        left.push(pending);
        continue;
      }
      const unitSize = sizeOf(pending.unit);
      const unitBytes = bytesOf?.(pending.unit) ?? 0;
      if (batch.length > 0 && (size + unitSize > maxBatchSize || bytes + unitBytes > maxBatchBytes)) {
        full = true;
        left.push(pending);
        continue;
      }
      size += unitSize;
      bytes += unitBytes;
      batch.push(pending);
    }
    this.queue = left;
    for (const pending of batch) for (const key of pending.keys) this.held.add(key);
    return batch;
  }

  private async runBatch(batch: Pending<Unit, Result>[]): Promise<void> {
    try {
      const outcomes = await this.options.flush(batch.map((p) => p.unit));
      batch.forEach((pending, i) => {
        const outcome = outcomes[i];
        if (outcome?.status === 'fulfilled') pending.resolve(outcome.value);
        else pending.reject(outcome ? outcome.reason : new Error('flush returned no outcome'));
      });
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    } finally {
      for (const pending of batch) for (const key of pending.keys) this.held.delete(key);
      this.running -= 1;
      this.pump();
      if (this.running === 0 && this.queue.length === 0) {
        for (const wake of this.idleWaiters.splice(0)) wake();
      }
    }
  }
}
