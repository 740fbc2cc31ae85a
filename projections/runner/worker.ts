import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Pool } from '../../src/db/pool.js';
import type { EventStore } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import type { Metrics } from '../../src/metrics.js';
import { PartClaims, type Claim } from './claims.js';
import * as checkpointsSql from './checkpoints-sql.js';
import { RebuildControl } from './control.js';
import { CursorCache } from './cursors.js';
import { AccountDiscovery } from './discovery.js';
import { FoundEvents } from './found-events.js';
import { Lane } from './lane.js';
import { LagReport } from './lag-report.js';
import { partOf } from './parts.js';
import type { Projection } from './projection.js';
import { FairScheduler, type Job } from './scheduler.js';
import { SharedCatchUp } from './shared-catch-up.js';
import { workerName } from './worker-name.js';
import { WorkerSignals } from './worker-signals.js';

/** Events a batch reads and applies at most, unless told otherwise (PROJECTION_BATCH_SIZE). */
export const defaultBatchSize = 5_000;

/** What a worker reads the store with. */
export type WorkerStore = Pick<EventStore, 'readAll' | 'backlog' | 'mayRepeatEventIds' | 'scanAccounts' | 'comparePositions'>;

export interface WorkerOptions {
  /** The read-model database: the worker keeps `lanes` connections of it, and uses one more now and then. */
  pool: Pool;
  store: WorkerStore;
  log: Logger;
  metrics?: Metrics;
  projections: readonly Projection[];
  /** Events read (and applied in one transaction) at a time, per account and projection. */
  batchSize?: number;
  /** Bytes of event data a batch holds, past its first event. */
  batchBytes?: number;
  /** How often the store is looked at for new events when no append in this process signals them. */
  pollMs?: number;
  /** How long a claim on a part lasts unless renewed (renewed every third of it). */
  leaseMs?: number;
  /** Batches applied at once (connections), for different accounts or projections. */
  lanes?: number;
}

export type WorkerState = 'starting' | 'active' | 'standby' | 'stopped';

/** How long a claim lasts unless renewed: a dead worker's parts go to the others after it. */
export const defaultLeaseMs = 6_000;

export { workerName } from './worker-name.js';

/**
 * A projection worker: one per process, sharing the work with every other worker of the database
 * (docs/projections.md, Parts, claims and checkpoints). It claims parts (accounts hashed), finds the
 * accounts with new events, and applies their batches on a few lanes, the accounts taking turns:
 * each (projection, account) in store order, no account behind another's backlog.
 */
export class ProjectionWorker {
  readonly id = randomUUID();
  private readonly signals = new WorkerSignals();
  private loop: Promise<void> | null = null;
  private readonly laneCount: number;
  private readonly scheduler: FairScheduler;
  private readonly claims: PartClaims;
  private readonly discovery: AccountDiscovery;
  private readonly control: RebuildControl;
  private readonly cursors: CursorCache;
  private readonly found: FoundEvents;
  private readonly lag: LagReport;
  private readonly log: Logger;
  private readonly source: SharedCatchUp;
  private stateNow: WorkerState = 'starting';
  private everHeld = false;
  /** The lag report under way, if any. */
  private lagReport: Promise<void> | null = null;

  constructor(private readonly options: WorkerOptions) {
    this.log = options.log.child({ worker: workerName });
    const lanes = options.lanes ?? 4;
    this.scheduler = new FairScheduler(
      options.projections.map((p) => p.name),
      lanes,
    );
    this.source = new SharedCatchUp(options.store);
    this.cursors = new CursorCache(options.store);
    this.found = new FoundEvents(options.store, this.cursors, options.projections.map((p) => p.name));
    this.discovery = new AccountDiscovery(options.pool, options.store, (accounts) => this.markAccounts(accounts));
    this.claims = new PartClaims({
      pool: options.pool,
      workerId: this.id,
      name: workerName,
      leaseMs: this.leaseMs,
      log: this.log,
      onGained: (claims) => this.gained(claims),
      onLost: (parts) => this.lostParts(parts),
      idle: (part) => this.scheduler.inFlightFor(this.discovery.accountsIn(new Set([part]))) === 0,
    });
    this.control = new RebuildControl(options.pool, options.projections, options.store, this.log, {
      onRestarted: (projection) => {
        this.cursors.forgetProjection(projection.name);
        for (const accountId of this.discovery.accountsIn(new Set(this.claims.parts))) this.scheduler.mark(accountId, [projection.name]);
        this.signals.wakeAll();
      },
      onAccountReset: (accountId) => {
        this.cursors.forgetAccount(accountId);
        if (this.claims.holds(partOf(accountId))) this.scheduler.mark(accountId);
        this.signals.wakeAll();
      },
    });
    this.lag = new LagReport(options.pool, this.scheduler, options.metrics, options.projections, this.id, async (projection, accountId) => {
      const cursor = this.cursors.peek(projection.name, accountId);
      if (!cursor) return null;
      const backlog = await options.store.backlog(cursor.checkpoint, { types: projection.eventTypes, accountId }).catch(() => null);
      return backlog?.events ?? null;
    });
    this.laneCount = lanes;
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? defaultLeaseMs;
  }

  get state(): WorkerState {
    return this.stateNow;
  }

  /** Whether this worker has held a part at some point. */
  get hasHeldParts(): boolean {
    return this.everHeld;
  }

  /** Parts this worker holds now. */
  get parts(): number[] {
    return this.claims.parts;
  }

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /**
   * Events of these accounts were appended in this process: apply them now rather than once
   * discovery reads them (on EventStoreDB, that read has the busiest account's events to go
   * through first). Discovery looks at the store now only for an account not registered yet, which
   * it alone can start; for the others its next poll is soon enough, and a look now would only
   * compete with their batches for the CPU and the database (docs/performance.md, Idle freshness).
   */
  wake(accountIds: readonly string[] = []): void {
    const known = accountIds.filter((accountId) => this.discovery.knows(accountId));
    if (known.length < accountIds.length) this.signals.wakeDiscovery();
    this.markHeld(known);
  }

  /** Finishes the batches in hand, gives up its parts and stops. */
  async stop(): Promise<void> {
    this.signals.stop();
    await this.loop;
  }

  private setState(state: WorkerState): void {
    if (state === this.stateNow) return;
    this.stateNow = state;
    for (const projection of this.options.projections) this.options.metrics?.projectionActive.set({ projection: projection.name }, state === 'active' ? 1 : 0);
    if (state === 'active' || state === 'standby') this.log.info(`projection worker ${state}`);
  }

  /**
   * Discovery found events of these accounts: pending, the projections whose cursors have not
   * read that far. A job in flight is left to judge at its end (FoundEvents.past), so that events
   * an append already had applied are not looked for again.
   */
  private markAccounts(found: readonly { accountId: string; last: string }[]): void {
    let marked = false;
    for (const { accountId, last } of found) {
      const behind = this.found.found(accountId, last);
      if (behind.length === 0 || !this.claims.holds(partOf(accountId))) continue;
      this.scheduler.found(accountId, behind);
      marked = true;
    }
    if (marked) this.signals.wakeLanes();
  }

  /** Marks the accounts of the parts this worker holds as having new events, and wakes the lanes. */
  private markHeld(accountIds: readonly string[]): void {
    let marked = false;
    for (const accountId of accountIds) {
      if (!this.claims.holds(partOf(accountId))) continue;
      this.scheduler.mark(accountId);
      marked = true;
    }
    if (marked) this.signals.wakeLanes();
  }

  private gained(claims: Claim[]): void {
    this.everHeld = true;
    const parts = new Set(claims.map((c) => c.part));
    this.lag.claimed(parts);
    for (const accountId of this.discovery.accountsIn(parts)) {
      // Another worker may have moved its cursors while this one did not hold the part.
      this.cursors.forgetAccount(accountId);
      this.scheduler.mark(accountId);
    }
    this.signals.wakeAll();
  }

  private lostParts(parts: number[]): void {
    const lost = new Set(parts);
    for (const accountId of this.discovery.accountsIn(lost)) {
      this.scheduler.drop(accountId);
      this.cursors.forgetAccount(accountId);
    }
  }

  /**
   * Two loops beside the lanes: the heartbeat (claims, rebuilds, lag), on a timer of its own so that
   * a long read of the store never delays the renewal of the leases; and discovery, which follows
   * the store for accounts with new events.
   */
  private async run(): Promise<void> {
    await this.signals.untilStopped(this.log.child({ loop: 'load' }), async () => {
      await this.discovery.load();
      return 'done';
    });
    const lanes = Array.from({ length: this.laneCount }, (_, i) => this.runLane(i));
    await Promise.all([this.heartbeatLoop(), this.discoveryLoop()]);
    this.signals.wakeAll();
    await Promise.all(lanes);
    await this.lagReport;
    await this.control.settled();
    await this.claims.releaseAll().catch((error: unknown) => this.log.warn({ err: error }, 'projection parts not given up at stop; they are free once their leases expire'));
    this.setState('stopped');
  }

  private async heartbeatLoop(): Promise<void> {
    let client: pg.PoolClient | null = null;
    await this.signals.untilStopped(this.log.child({ loop: 'heartbeat' }), async () => {
      if (!client) {
        const fresh = await this.options.pool.connect();
        client = fresh;
        await fresh.query(checkpointsSql.nameSession, [checkpointsSql.sessionName(workerName)]);
        await this.control.load(fresh);
      }
      await this.claims.tick(client);
      this.setState(this.claims.parts.length > 0 ? 'active' : 'standby');
      await this.control.check(client, this.discovery.caughtUp);
      // Counting the events behind can take seconds (EventStoreDB reads them): never in the way of the renewals.
      this.lagReport ??= this.lag
        .maybeReport(this.claims.parts)
        .catch((error: unknown) => this.log.warn({ err: error }, 'projection lag not reported'))
        .finally(() => {
          this.lagReport = null;
        });
      await this.signals.sleepFor(this.leaseMs / 4);
      return 'again';
    }, () => {
      // A connection that failed may be broken: closed, not reused.
      client?.release(true);
      client = null;
      this.setState('starting');
    });
    (client as pg.PoolClient | null)?.release();
  }

  private async discoveryLoop(): Promise<void> {
    const pollMs = this.options.pollMs ?? 100;
    await this.signals.untilStopped(this.log.child({ loop: 'discovery' }), async () => {
      this.signals.passStarted();
      const more = await this.discovery.poll();
      if (!more) await this.signals.loopIdle(pollMs);
      return 'again';
    });
  }

  private async runLane(index: number): Promise<void> {
    const lane = new Lane(index, {
      pool: this.options.pool,
      source: this.source,
      mayRepeatEventIds: this.options.store.mayRepeatEventIds === true,
      cursors: this.cursors,
      projections: this.options.projections,
      batchSize: this.options.batchSize ?? defaultBatchSize,
      batchBytes: this.options.batchBytes,
      leaseMs: this.leaseMs,
      log: this.log,
      metrics: this.options.metrics,
      workerId: this.id,
      seenUpTo: (accountId) => this.found.upTo(accountId),
      comparePositions: (a, b) => this.options.store.comparePositions(a, b),
    });
    try {
      while (!this.signals.stopped) {
        const job: Job | null = this.scheduler.take((accountId) => this.claims.claimOn(partOf(accountId)) !== null);
        if (!job) {
          await this.signals.laneIdle(1_000);
          continue;
        }
        const claim = this.claims.claimOn(partOf(job.accountId));
        let outcome: 'more' | 'caught-up' = 'more';
        try {
          outcome = claim ? await lane.run(job, claim) : 'more';
          // Discovery's finds during the job were left to it (markAccounts).
          if (outcome === 'caught-up' && this.found.past(job.projection, job.accountId)) outcome = 'more';
          if (outcome === 'more') this.signals.wakeLanes();
        } catch (error) {
          if (!this.signals.stopped) {
            lane.failures.report(error);
            await lane.close(true);
            this.cursors.forget(job.projection, job.accountId);
            await this.signals.laneIdle(lane.failures.retryDelay());
            lane.failures.retrying();
          }
        } finally {
          this.scheduler.finish(job, outcome);
        }
        if (claim && lane.lostClaim) {
          lane.lostClaim = false;
          this.claims.lost(claim);
        }
      }
    } finally {
      await lane.close();
    }
  }
}
