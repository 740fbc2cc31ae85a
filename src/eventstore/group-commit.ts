/**
 * Group commit: callers submit units of work; units that arrive while a flush is running are
 * collected and flushed together, so a busy server writes many units per transaction. Each caller
 * is settled only after the flush that carried its unit has finished.
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
}

interface Pending<Unit, Result> {
  unit: Unit;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

export class GroupCommitter<Unit, Result> {
  private queue: Pending<Unit, Result>[] = [];
  private running = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: GroupCommitOptions<Unit, Result>) {}

  submit(unit: Unit): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ unit, resolve, reject });
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
      this.running += 1;
      void this.runBatch(this.takeBatch());
    }
  }

  private takeBatch(): Pending<Unit, Result>[] {
    const { sizeOf, bytesOf, maxBatchSize, maxBatchBytes = Infinity } = this.options;
    let size = 0;
    let bytes = 0;
    let count = 0;
    for (const pending of this.queue) {
      const unitSize = sizeOf(pending.unit);
      const unitBytes = bytesOf?.(pending.unit) ?? 0;
      if (count > 0 && (size + unitSize > maxBatchSize || bytes + unitBytes > maxBatchBytes)) break;
      size += unitSize;
      bytes += unitBytes;
      count += 1;
    }
    return this.queue.splice(0, count);
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
      this.running -= 1;
      this.pump();
      if (this.running === 0 && this.queue.length === 0) {
        for (const wake of this.idleWaiters.splice(0)) wake();
      }
    }
  }
}
