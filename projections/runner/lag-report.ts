import type { Pool } from '../../src/db/pool.js';
import type { Metrics } from '../../src/metrics.js';
import type { PartLag } from './claims-sql.js';
import * as claimsSql from './claims-sql.js';
import * as parkedSql from './parked-sql.js';
import { partOf } from './parts.js';
import type { Projection } from './projection.js';
import type { Behind, FairScheduler } from './scheduler.js';

/** How often a worker reports the lag of its parts. */
const reportEveryMs = 2_000;
/** A part's lag unchanged since it was written is written again only after this long (its `reportedAt`). */
const rewriteUnchangedMs = 30_000;
/** Accounts listed per part (status shows the worst of every part). */
const worstPerPart = 5;
/** Accounts whose events behind are counted, per projection. */
const countedAccounts = 3;
/** Ranks of the worst-accounts gauge. */
const ranks = 10;

/**
 * The lag of the accounts in this worker's parts, from what it knows without asking the store: an
 * account is behind from the moment new events of it were found until its cursors caught up again.
 * Written to each part's row (status, the dashboard) and to the metrics, whose labels never name
 * an account: per projection the worst lag and the count behind, the ten worst by rank, and a
 * histogram of every account's.
 */
export class LagReport {
  private lastAt = 0;
  /** Each held part's lag as last written, and when: an idle worker does not write the same again every report. */
  private readonly written = new Map<number, { lag: string; at: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly scheduler: Pick<FairScheduler, 'behind'>,
    private readonly metrics: Metrics | undefined,
    private readonly projections: readonly Projection[],
    private readonly workerId: string,
    /** Events of the projection not applied yet for the account (null: not known now). */
    private readonly eventsBehind: (projection: Projection, accountId: string) => Promise<number | null>,
  ) {
    // Every series there from the start, nothing behind until a report says otherwise.
    for (const projection of projections) {
      metrics?.projectionLagEvents.set({ projection: projection.name }, 0);
      metrics?.projectionLagSeconds.set({ projection: projection.name }, 0);
      metrics?.projectionAccountsBehind.set({ projection: projection.name }, 0);
      metrics?.projectionParked.set({ projection: projection.name }, 0);
    }
  }

  /** Parts just claimed: the claim cleared their lag, which the next report writes whatever it is. */
  claimed(parts: Iterable<number>): void {
    for (const part of parts) this.written.delete(part);
  }

  async maybeReport(parts: readonly number[]): Promise<void> {
    const now = performance.now();
    if (now - this.lastAt < reportEveryMs) return;
    this.lastAt = now;
    const held = new Set(parts);
    // A part lost and claimed again had its lag cleared by the claim: written anew.
    for (const part of this.written.keys()) if (!held.has(part)) this.written.delete(part);
    const behind = this.scheduler.behind().filter((b) => held.has(partOf(b.accountId)));
    const seconds = (b: Behind): number => Math.max(0, now - b.since) / 1000;
    behind.sort((a, b) => a.since - b.since);
    for (const part of parts) {
      const ofPart = behind.filter((b) => partOf(b.accountId) === part);
      const lag: PartLag = {
        accountsBehind: ofPart.length,
        worst: ofPart.slice(0, worstPerPart).map((b) => ({ accountId: b.accountId, seconds: Math.round(seconds(b) * 1000) / 1000, projections: b.projections })),
      };
      const json = JSON.stringify(lag);
      const last = this.written.get(part);
      if (last?.lag === json && now - last.at < rewriteUnchangedMs) continue;
      const { rowCount } = await this.pool.query(claimsSql.reportLag, [this.workerId, part, json]);
      if (rowCount) this.written.set(part, { lag: json, at: now });
      else this.written.delete(part);
    }
    const metrics = this.metrics;
    if (!metrics) return;
    metrics.projectionParts.set(parts.length);
    for (const projection of this.projections) {
      const of = behind.filter((b) => b.projections.includes(projection.name));
      metrics.projectionAccountsBehind.set({ projection: projection.name }, of.length);
      metrics.projectionLagSeconds.set({ projection: projection.name }, of[0] ? seconds(of[0]) : 0);
      // Counted in the store for the worst few only: counting every account's would cost a read of each backlog.
      let events = 0;
      for (const b of of.slice(0, countedAccounts)) events += (await this.eventsBehind(projection, b.accountId)) ?? 0;
      metrics.projectionLagEvents.set({ projection: projection.name }, events);
    }
    for (let rank = 1; rank <= ranks; rank += 1) {
      const b = behind[rank - 1];
      metrics.projectionWorstLagSeconds.set({ rank: String(rank) }, b ? seconds(b) : 0);
    }
    for (const b of behind) metrics.projectionAccountLag.observe(seconds(b));
    const parked = await this.pool.query<{ projection: string; parked: number }>(parkedSql.countParkedByProjection);
    for (const projection of this.projections) {
      metrics.projectionParked.set({ projection: projection.name }, parked.rows.find((r) => r.projection === projection.name)?.parked ?? 0);
    }
  }
}
