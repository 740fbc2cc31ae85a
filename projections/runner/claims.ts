import type pg from 'pg';
import type { Pool } from '../../src/db/pool.js';
import type { Logger } from '../../src/logger.js';
import * as sql from './claims-sql.js';
import { partCount } from './parts.js';

/** A part held by this worker, at the epoch of its claim. */
export interface Claim {
  part: number;
  epoch: string;
}

export interface ClaimsOptions {
  pool: Pool;
  workerId: string;
  /** pid@host. */
  name: string;
  /** How long a claim lasts unless renewed. */
  leaseMs: number;
  log: Logger;
  /** Parts just claimed: their accounts are to be looked at. */
  onGained: (claims: Claim[]) => void;
  /** Parts no longer held. */
  onLost: (parts: number[]) => void;
  /** Whether a part being given up has no batch in flight any more. */
  idle: (part: number) => boolean;
}

/**
 * This worker's claims on parts. Each tick renews its entry among the live workers and its leases,
 * claims free or expired parts up to its share (the part count divided by the live workers,
 * rounded up), and gives up parts above its share once their batches are done, so that a worker
 * that joins gets its share within a few ticks and one that dies loses its parts when its leases
 * expire. Holding a part here is a hint for scheduling; the fence in each batch's transaction
 * (claims-sql.ts) is what makes a lost claim commit nothing.
 */
export class PartClaims {
  private readonly held = new Map<number, string>();
  private readonly releasing = new Set<number>();
  /** performance.now() until which the leases renewed last are surely still running. */
  private validUntil = 0;

  constructor(private readonly options: ClaimsOptions) {}

  /** The claim on a part, if held, renewed in time, and not being given up. */
  claimOn(part: number): Claim | null {
    const epoch = this.held.get(part);
    if (epoch === undefined || this.releasing.has(part) || performance.now() >= this.validUntil) return null;
    return { part, epoch };
  }

  /**
   * Whether the part is held and not being given up, its lease surely valid or not: an account of
   * it found meanwhile is kept pending (a job waits for claimOn), not forgotten.
   */
  holds(part: number): boolean {
    return this.held.has(part) && !this.releasing.has(part);
  }

  get parts(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /**
   * A batch found its claim gone (the fence): forget it until claimed again, unless the part was
   * claimed again meanwhile (the batch ran under an older epoch than the one held now).
   */
  lost(claim: Claim): void {
    if (this.held.get(claim.part) !== claim.epoch) return;
    this.held.delete(claim.part);
    this.releasing.delete(claim.part);
    this.options.onLost([claim.part]);
  }

  /**
   * Heartbeat, renewals and claims, on `db`: the heartbeat's own connection, so that lanes, an index
   * build or a lag report holding the pool's connections never delay a renewal past the lease.
   */
  async tick(db: pg.ClientBase | Pool = this.options.pool): Promise<void> {
    const { workerId, name, leaseMs } = this.options;
    const started = performance.now();
    await db.query(sql.heartbeat, [workerId, name, leaseMs]);
    const mine = [...this.held];
    const renewed = await db.query<{ part: number; epoch: string }>(sql.renewLeases, [workerId, leaseMs, mine.map(([part]) => part), mine.map(([, epoch]) => epoch)]);
    // A margin for the clocks of this host and the database's to drift apart a little.
    this.validUntil = started + leaseMs * 0.9;
    const stillHeld = new Map(renewed.rows.map((row) => [row.part, row.epoch]));
    const lost = [...this.held.keys()].filter((part) => stillHeld.get(part) !== this.held.get(part));
    for (const part of lost) {
      this.held.delete(part);
      this.releasing.delete(part);
    }
    if (lost.length) {
      this.options.log.warn({ parts: lost }, 'projection parts lost (lease expired or claimed by another worker)');
      this.options.onLost(lost);
    }
    const { rows } = await db.query<{ live: number }>(sql.liveWorkers);
    const share = Math.ceil(partCount / Math.max(1, rows[0]?.live ?? 1));
    await this.giveUpAbove(share);
    const wanted = share - this.held.size;
    if (wanted > 0) {
      const claimed = await db.query<{ part: number; epoch: string }>(sql.claimFree, [workerId, name, leaseMs, wanted]);
      if (claimed.rows.length) {
        for (const row of claimed.rows) this.held.set(row.part, row.epoch);
        this.options.log.info({ parts: claimed.rows.map((row) => row.part) }, 'projection parts claimed');
        this.options.onGained(claimed.rows.map((row) => ({ part: row.part, epoch: row.epoch })));
      }
    }
    if (Math.random() < 0.01) await db.query(sql.forgetDeadWorkers);
  }

  /** Gives up the parts above `share` (the highest first), each once no batch of it is in flight. */
  private async giveUpAbove(share: number): Promise<void> {
    const extra = this.held.size - share;
    const byPart = [...this.held.keys()].sort((a, b) => b - a);
    for (const part of byPart.slice(0, Math.max(0, extra))) this.releasing.add(part);
    for (const part of [...this.releasing]) {
      if (!this.options.idle(part)) continue;
      const epoch = this.held.get(part);
      if (epoch !== undefined) await this.options.pool.query(sql.release, [this.options.workerId, part, epoch]);
      this.held.delete(part);
      this.releasing.delete(part);
      this.options.onLost([part]);
    }
  }

  /** Gives up every part and leaves the live workers (a worker that stops). */
  async releaseAll(): Promise<void> {
    for (const [part, epoch] of this.held) await this.options.pool.query(sql.release, [this.options.workerId, part, epoch]);
    this.held.clear();
    this.releasing.clear();
    await this.options.pool.query(sql.forgetWorker, [this.options.workerId]);
  }
}
