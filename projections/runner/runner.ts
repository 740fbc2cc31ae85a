import { hostname } from 'node:os';
import type pg from 'pg';
import type { Pool } from '../../src/db/pool.js';
import { defaultPageBytes } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import type { Metrics } from '../../src/metrics.js';
import { applyPage } from './batch.js';
import { FailureBackoff } from './failure-backoff.js';
import * as sql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import * as parkedSql from './parked-sql.js';
import type { Projection } from './projection.js';
import type { CatchUpSource } from './shared-catch-up.js';

export interface RunnerOptions {
  /** The read-model database; each runner keeps one of its connections for as long as it runs. */
  pool: Pool;
  store: CatchUpSource;
  log: Logger;
  metrics?: Metrics;
  /** Events read (and applied in one transaction) at a time. */
  batchSize?: number;
  /** Bytes of event data read (and applied in one transaction) at a time, past the first event. */
  batchBytes?: number;
  /** How long a caught-up worker waits for new events before looking again, unless woken first. */
  pollMs?: number;
  /** How often a standby worker tries to take over. */
  lockRetryMs?: number;
  /** Return once caught up (a rebuild run by the CLI), instead of following new events. */
  untilCaughtUp?: boolean;
}

export type RunnerState = 'starting' | 'standby' | 'active' | 'stopped';

/** How often the lag (events and seconds behind) is counted while the worker keeps up. */
const lagEveryMs = 2_000;
/** How often while the backlog last counted was large: counting scans it, and it is large then. */
const lagWhileBusyMs = 15_000;

/** How status names this process: `pid@host`. */
const workerName = `${process.pid}@${hostname()}`;

/**
 * Runs one projection: takes its advisory lock (standing by while another worker holds it), then
 * reads the event store from the stored checkpoint and applies batches, each in one transaction
 * with the checkpoint that follows it. A crash anywhere leaves the read models at a batch boundary.
 */
export class ProjectionRunner {
  private stateNow: RunnerState = 'starting';
  private stopped = false;
  private pending = false;
  private wakeUp: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  private readonly log: Logger;
  private lastLagAt = 0;
  /** Events behind at the last count: past a batch, the next count waits longer. */
  private lastLagEvents = 0;
  private everActive = false;
  private readonly failures: FailureBackoff;

  constructor(
    readonly projection: Projection,
    private readonly options: RunnerOptions,
  ) {
    this.log = options.log.child({ projection: projection.name });
    this.failures = new FailureBackoff(this.log);
  }

  get state(): RunnerState {
    return this.stateNow;
  }

  /** Whether this runner has held the projection's lock at some point. */
  get hasBeenActive(): boolean {
    return this.everActive;
  }

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** New events were appended: look now rather than at the next poll. */
  wake(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  /** Finishes the batch in hand, releases the lock and stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
  }

  /** Resolves when the runner has ended (stopped, or caught up with `untilCaughtUp`). */
  done(): Promise<void> {
    return this.loop ?? Promise.resolve();
  }

  private setState(state: RunnerState): void {
    if (state === this.stateNow) return;
    this.stateNow = state;
    if (state === 'active') this.everActive = true;
    this.options.metrics?.projectionActive.set({ projection: this.projection.name }, state === 'active' ? 1 : 0);
    if (state === 'active' || state === 'standby') this.log.info(`projection worker ${state}`);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let client: pg.PoolClient | null = null;
      let failed = false;
      try {
        client = await this.options.pool.connect();
        await client.query(sql.nameSession, [sql.sessionName(this.projection.name, workerName)]);
        await this.endIfClientVanishes(client);
        if (!(await this.takeLock(client))) break;
        this.setState('active');
        if ((await this.follow(client)) === 'caught-up') break;
      } catch (error) {
        failed = true;
        if (!this.stopped) this.failures.report(error);
      } finally {
        // Closing the connection (not returning it to the pool) releases the lock with certainty.
        client?.release(true);
        if (this.stateNow === 'active') this.setState('starting');
      }
      if (failed && !this.stopped) {
        // Transient failures (connection, timeout, conflicts) are retried, waiting longer each time.
        await this.sleep(this.failures.retryDelay(), false);
        this.failures.retrying();
      }
    }
    this.setState('stopped');
  }

  /**
   * A worker whose host vanishes without closing its connection would keep the lock until TCP gives
   * up on it (hours): the server ends the session once it has been idle well past the longest pause
   * of a live worker, and a standby takes over. (idle_session_timeout exists from PostgreSQL 14.)
   */
  private async endIfClientVanishes(client: pg.PoolClient): Promise<void> {
    const longestPauseMs = Math.max(this.options.pollMs ?? 100, this.options.lockRetryMs ?? 1_000);
    const timeout = `${Math.max(30_000, longestPauseMs * 3)}ms`;
    await client.query(sql.setIdleSessionTimeout, [timeout]).catch(() => undefined);
  }

  /** Waits, as a standby, until this worker holds the projection's lock; false when stopped first. */
  private async takeLock(client: pg.PoolClient): Promise<boolean> {
    while (!this.stopped) {
      const { rows } = await client.query<{ locked: boolean }>(sql.tryLock, [this.projection.lockKey]);
      if (rows[0]?.locked) return true;
      this.setState('standby');
      await this.sleep(this.options.lockRetryMs ?? 1_000, false);
    }
    return false;
  }

  /**
   * The active loop. The connection holding the lock also writes every batch: should it be lost,
   * the lock goes with it and no write can follow; and a checkpoint that moved under this worker
   * fails the batch's compare-and-set, so even two workers could never apply a batch twice.
   */
  private async follow(client: pg.PoolClient): Promise<'stopped' | 'caught-up'> {
    const { name, eventTypes } = this.projection;
    const batchSize = this.options.batchSize ?? 5_000;
    const batchBytes = this.options.batchBytes ?? defaultPageBytes;
    await client.query(sql.ensureCheckpoint, [name]);
    await client.query(sql.markActive, [name, workerName]);
    let state = await this.load(client);
    await this.reportParked(client);
    while (!this.stopped) {
      if (state.rebuild_requested_at) {
        state = await this.restart(client, state.rebuild_requested_at);
        continue;
      }
      this.pending = false;
      const page = await this.options.store.readAll(state.checkpoint, batchSize, {
        types: eventTypes,
        data: this.projection.readsData !== false,
        maxBytes: batchBytes,
      });
      // Counting the backlog costs a scan of it: seldom while it is large. A page of a shared read
      // holds only this projection's events, so the count, not the page, tells how far behind.
      const caughtUp = page.checkpoint === state.checkpoint;
      await this.reportLag(client, caughtUp ? 'caught-up' : { checkpoint: state.checkpoint }, caughtUp || this.lastLagEvents < batchSize ? lagEveryMs : lagWhileBusyMs);
      if (caughtUp) {
        if (state.rebuild_started_at && !state.rebuild_finished_at) {
          state = (await client.query<CheckpointRow>(sql.finishRebuild, [name])).rows[0] ?? state;
          this.log.info({ events: state.events_applied }, 'rebuild finished');
        }
        if (this.options.untilCaughtUp) return 'caught-up';
        this.failures.recovered();
        await this.sleep(this.options.pollMs ?? 100, true);
        // Also notices a rebuild asked for meanwhile.
        state = await this.load(client);
        continue;
      }
      const outcome = await applyPage(client, this.projection, this.options.store.mayRepeatEventIds === true, state, page, this.log);
      if (!outcome) {
        // The checkpoint moved (a rebuild asked for, or another worker): read where it is now.
        state = await this.load(client);
        continue;
      }
      state = outcome.state;
      this.failures.recovered();
      this.options.metrics?.projectionEventsApplied.inc({ projection: name }, outcome.applied);
      if (outcome.parked) {
        this.options.metrics?.projectionEventsParked.inc({ projection: name }, outcome.parked);
        await this.reportParked(client);
      }
    }
    return 'stopped';
  }

  private async load(client: pg.PoolClient): Promise<CheckpointRow> {
    const { rows } = await client.query<CheckpointRow>(sql.selectCheckpoint, [this.projection.name]);
    if (!rows[0]) throw new Error(`no checkpoint row for projection ${this.projection.name}`);
    return rows[0];
  }

  /** Empties the read models and goes back to the start of the store, in one transaction. */
  private async restart(client: pg.PoolClient, requestedAt: Date): Promise<CheckpointRow> {
    const { name, tables, eventTypes } = this.projection;
    const target = await this.options.store.backlog(null, { types: eventTypes });
    await client.query('BEGIN');
    try {
      await client.query(`TRUNCATE ${tables.join(', ')}`);
      await client.query(sql.forgetAppliedEventIds, [name]);
      await client.query(parkedSql.forgetParked, [name]);
      const { rows } = await client.query<CheckpointRow>(sql.restartCheckpoint, [name, target.events, requestedAt]);
      await client.query('COMMIT');
      await this.reportParked(client);
      this.log.info({ events: target.events }, 'rebuild started');
      return rows[0] as CheckpointRow;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /**
   * Lag for the metrics, every few seconds: counted from `from`, or none when the last read found
   * nothing new (nothing is behind then, and nothing need be counted).
   */
  private async reportLag(client: pg.PoolClient, from: { checkpoint: string | null } | 'caught-up', everyMs: number): Promise<void> {
    const metrics = this.options.metrics;
    const now = Date.now();
    if (!metrics || now - this.lastLagAt < everyMs) return;
    // A retry (another process) may have unparked events meanwhile.
    await this.reportParked(client);
    const projection = this.projection.name;
    if (from === 'caught-up') {
      metrics.projectionLagEvents.set({ projection }, 0);
      metrics.projectionLagSeconds.set({ projection }, 0);
      this.lastLagEvents = 0;
      this.lastLagAt = now;
      return;
    }
    // Lag is for the eye: a store that cannot count it now does not stop the worker.
    const backlog = await this.options.store.backlog(from.checkpoint, { types: this.projection.eventTypes }).catch((error: unknown) => {
      this.log.debug({ err: error }, 'projection lag not measured');
      return null;
    });
    if (!backlog) {
      this.lastLagAt = now;
      return;
    }
    metrics.projectionLagEvents.set({ projection }, backlog.events);
    this.lastLagEvents = backlog.events;
    metrics.projectionLagSeconds.set({ projection }, backlog.oldestRecordedAt ? Math.max(0, now - Date.parse(backlog.oldestRecordedAt)) / 1000 : 0);
    this.lastLagAt = now;
  }

  /** Events parked and not re-applied yet, for the metrics. */
  private async reportParked(client: pg.PoolClient): Promise<void> {
    const metrics = this.options.metrics;
    if (!metrics) return;
    const { rows } = await client.query<{ parked: number }>(parkedSql.countParked, [this.projection.name]);
    metrics.projectionParked.set({ projection: this.projection.name }, rows[0]?.parked ?? 0);
  }

  /** Sleeps `ms`; a stop ends the sleep, and so does a wake when `wakeable`. */
  private sleep(ms: number, wakeable: boolean): Promise<void> {
    if (this.stopped || (wakeable && this.pending)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = () => {
        if (wakeable || this.stopped) done();
      };
    });
  }
}
