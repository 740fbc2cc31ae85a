import type pg from 'pg';
import type { Pool } from '../../src/db/pool.js';
import { defaultPageBytes } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import type { Metrics } from '../../src/metrics.js';
import { applyPage } from './batch.js';
import type { Claim } from './claims.js';
import * as sql from './checkpoints-sql.js';
import * as accountsSql from './accounts-sql.js';
import type { CursorCache } from './cursors.js';
import { FailureBackoff } from './failure-backoff.js';
import { workerName } from './worker-name.js';
import type { Projection } from './projection.js';
import type { Job } from './scheduler.js';
import type { CatchUpSource } from './shared-catch-up.js';

export interface LaneOptions {
  pool: Pool;
  source: CatchUpSource;
  mayRepeatEventIds: boolean;
  cursors: CursorCache;
  projections: readonly Projection[];
  batchSize: number;
  batchBytes?: number;
  leaseMs: number;
  log: Logger;
  metrics?: Metrics;
  workerId: string;
  /** The latest position at which the worker found events of the account (discovery). */
  seenUpTo: (accountId: string) => string | undefined;
  comparePositions: (a: string | null, b: string | null) => number;
}

/** How long a lane waits before reading again an account whose events were found but not read yet. */
const notYetReadableMs = 20;

/**
 * One connection of a worker, applying one batch at a time: the events of one account for one
 * projection, read from the account's cursor and committed with it under the part's fence.
 */
export class Lane {
  readonly failures: FailureBackoff;
  /** The last batch found the claim gone. */
  lostClaim = false;
  private client: pg.PoolClient | null = null;

  constructor(
    readonly index: number,
    private readonly options: LaneOptions,
  ) {
    this.failures = new FailureBackoff(options.log.child({ lane: index }));
  }

  /** One batch of `job`: `caught-up` when there was nothing to apply, `more` otherwise. */
  async run(job: Job, claim: Claim): Promise<'more' | 'caught-up'> {
    const projection = this.options.projections.find((p) => p.name === job.projection);
    if (!projection) throw new Error(`no projection named ${job.projection}`);
    const client = await this.connection();
    const cursor = await this.options.cursors.get(client, projection.name, job.accountId);
    const page = await this.options.source.readAll(cursor.checkpoint, this.options.batchSize, {
      types: projection.eventTypes,
      data: projection.readsData !== false,
      maxBytes: this.options.batchBytes ?? defaultPageBytes,
      accountId: job.accountId,
    });
    if (page.checkpoint === cursor.checkpoint) {
      // Nothing read, but the store cannot tell yet that nothing is there (a subscription still
      // catching up), or events of the account were found that this read does not return yet (one
      // subscription of EventStoreDB may be told of an event after another): look again.
      if (page.atEnd === false || this.foundPast(job.accountId, cursor.checkpoint)) {
        await new Promise((resolve) => setTimeout(resolve, notYetReadableMs));
        return 'more';
      }
      await this.caughtUp(client, projection.name, job.accountId, cursor);
      this.failures.recovered();
      return 'caught-up';
    }
    const outcome = await applyPage(
      client,
      projection,
      this.options.mayRepeatEventIds,
      { accountId: job.accountId, checkpoint: cursor.checkpoint, claim: { ...claim, workerId: this.options.workerId } },
      page,
      this.options.log,
    );
    this.failures.recovered();
    if (!outcome.committed) {
      // Moved by another worker or a rebuild, or the claim is gone: read the cursor again.
      this.options.cursors.forget(projection.name, job.accountId);
      if (outcome.reason === 'fenced') this.lostClaim = true;
      return 'more';
    }
    cursor.checkpoint = outcome.checkpoint;
    this.options.metrics?.projectionEventsApplied.inc({ projection: projection.name }, outcome.applied);
    if (outcome.parked) {
      this.options.metrics?.projectionEventsParked.inc({ projection: projection.name }, outcome.parked);
      // Counted again in full with the lag, every 2 s (a retry elsewhere may unpark some).
      this.options.metrics?.projectionParked.inc({ projection: projection.name }, outcome.parked);
    }
    // The page held every event readable when it was read: caught up as of then, without a read
    // that finds nothing (under steady traffic that read may never come, and a rebuild never end).
    if (page.atEnd === true && !this.foundPast(job.accountId, cursor.checkpoint)) {
      await this.caughtUp(client, projection.name, job.accountId, cursor);
      return 'caught-up';
    }
    return 'more';
  }

  /** Whether discovery found events of the account past `checkpoint` (readable or not yet). */
  private foundPast(accountId: string, checkpoint: string | null): boolean {
    const seen = this.options.seenUpTo(accountId);
    return seen !== undefined && this.options.comparePositions(checkpoint, seen) < 0;
  }

  private async caughtUp(client: pg.PoolClient, projection: string, accountId: string, cursor: { caughtUp: boolean }): Promise<void> {
    if (cursor.caughtUp) return;
    await client.query(accountsSql.markCaughtUp, [projection, accountId]);
    cursor.caughtUp = true;
  }

  /**
   * The lane's connection, kept across batches. A session that sits in a transaction longer than
   * a lease (a paused worker's, or one whose host is cut off) is ended by the server, releasing its
   * locks: its batch is rolled back.
   */
  private async connection(): Promise<pg.PoolClient> {
    if (this.client) return this.client;
    const client = await this.options.pool.connect();
    try {
      await client.query(sql.nameSession, [sql.sessionName(workerName)]);
      await client.query(sql.setIdleInTransactionTimeout, [`${this.options.leaseMs}ms`]);
    } catch (error) {
      client.release(true);
      throw error;
    }
    this.client = client;
    return client;
  }

  /** Drops the connection after a failure (it may be broken) or at the end. */
  async close(broken = false): Promise<void> {
    this.client?.release(broken);
    this.client = null;
    await Promise.resolve();
  }
}
