import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { projections as allProjections } from '../../projections/index.js';
import type { Projection } from '../../projections/runner/projection.js';
import { rebuildAccountAndWait } from '../../projections/runner/rebuild.js';
import type { Pool } from '../db/pool.js';
import { inTransaction } from '../db/transaction.js';
import { defaultActivitySettings } from '../activity/recorder.js';
import { keyCacheMs } from '../eventstore/person-keys.js';
import { eraseKeys } from '../eventstore/person-keys-sql.js';
import type { EventStore } from '../eventstore/port.js';
import type { AccountRefs } from '../eventstore/events.js';
import { Pseudonyms } from '../eventstore/pseudonyms.js';
import { personIds } from '../eventstore/sealing.js';
import { personsOf, union, type Persons, type Queryable } from './persons.js';
import { lockUsers } from '../ingest/identity-map-sql.js';
import type { Logger } from '../logger.js';
import { jobOf, type ErasureCounts, type ErasureJob, type ErasureRow } from './requests.js';
import * as sql from './sql.js';

/**
 * After erasing keys, the runner waits this long before it rebuilds: every process has then
 * dropped the keys it had read (person-keys.ts), and so its caches of opened events.
 */
export const settleMs = keyCacheMs + 1_000;

/** An attempt that fails is tried again this much later, up to maxAttempts in all. */
const retryMs = 5_000;
const maxAttempts = 5;

export interface ErasureRunnerOptions {
  pool: Pool;
  store: EventStore;
  log: Logger;
  projections?: readonly Projection[];
  /** How long a claim lasts unless renewed (renewed every third of it while the erasure runs). */
  leaseMs?: number;
  /** How often pending erasures are looked for (a request in this process wakes the runner at once). */
  pollMs?: number;
  settleMs?: number;
  /**
   * Only this account's erasures: a runner that someone waits on for one of them (`tracking
   * erase`), and that would otherwise take up another account's work it is about to stop on.
   */
  accountId?: string;
}

/** The steps of an erasure's attempt, in order; a round repeats from keys-erased to deciding. */
export type ErasureStep = 'claimed' | 'suppressed' | 'keys-erased' | 'settled' | 'keys-erased-again' | 'rebuilt' | 'refusals-deleted' | 'vacuumed' | 'deciding' | 'done';

export type StepHook = (step: ErasureStep, accountId: string) => Promise<void>;

/**
 * Carries out erasure requests (docs/decisions.md, Erasure): a durable job each, claimed under a
 * lease by whichever service process looks first, and taken over by another when its process dies.
 * Every step can be done again: an attempt that was cut off is simply run again.
 */
export class ErasureRunner {
  private readonly owner = `erasure-${randomUUID()}`;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly settleMs: number;
  private readonly projections: readonly Projection[];
  private readonly pseudonyms: Pseudonyms;
  private running: Promise<void> | null = null;
  private stepHook: StepHook | null = null;
  private stopped = false;
  private readonly stopping = new AbortController();
  private wakeUp: (() => void) | null = null;

  constructor(private readonly options: ErasureRunnerOptions) {
    this.leaseMs = options.leaseMs ?? 15_000;
    this.pollMs = options.pollMs ?? 2_000;
    this.settleMs = options.settleMs ?? settleMs;
    this.projections = options.projections ?? allProjections;
    this.pseudonyms = new Pseudonyms(options.pool);
  }

  start(): this {
    this.running ??= this.loop();
    return this;
  }

  /** Calls `hook` at each step of each erasure and waits for it: how tests interleave other work with an erasure, step by step. */
  onStep(hook: StepHook | null): void {
    this.stepHook = hook;
  }

  /** Looks for pending erasures now. */
  wake(): void {
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    this.wake();
    await this.running;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let claimed: ErasureJob[] = [];
      try {
        const { rows } = await this.options.pool.query<ErasureRow>(sql.claimErasures, [this.owner, this.leaseMs, this.options.accountId ?? null]);
        claimed = rows.map(jobOf);
      } catch (error) {
        this.options.log.warn({ err: error }, 'could not look for pending erasures');
      }
      if (claimed.length > 0) await this.runAccount(claimed);
      else await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollMs);
        this.wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wakeUp = null;
    }
  }

  /**
   * Runs the claimed erasures of one account together: one settle wait, one rebuild, one vacuum a
   * round. A round erases the people as the identity map names them when it starts; it ends in the
   * decision, taken under the users' merge locks: when no merge into them came meanwhile, the
   * erasures are done; else another round erases the ids merged since (docs/decisions.md, Erasure).
   */
  private async runAccount(jobs: ErasureJob[]): Promise<void> {
    const { pool, log } = this.options;
    const ids = jobs.map((job) => job.id);
    const renew = setInterval(() => void pool.query(sql.renewLeases, [this.owner, ids, this.leaseMs]).catch(() => undefined), this.leaseMs / 3);
    const accountId = (jobs[0] as ErasureJob).accountId;
    try {
      const started = Date.now();
      const persons = new Map<string, Persons>();
      const counts = new Map<string, ErasureCounts>();
      await this.step('claimed', accountId);
      const refs = await this.pseudonyms.of(accountId);
      for (const job of jobs) {
        const named = await personsOf(pool, job, refs);
        persons.set(job.id, named);
        const userRef = job.userId === null ? null : refs.user(job.userId);
        const anonymousRef = job.anonymousId === null ? null : refs.anonymous(job.anonymousId);
        // Kept for good: the ids themselves go when the erasure is done.
        await pool.query(sql.saveRefs, [job.id, userRef, anonymousRef]);
        if (job.suppress) await pool.query(sql.suppressIds, [accountId, [...(userRef === null ? [] : [personIds.user(userRef)]), ...(anonymousRef === null ? [] : [personIds.anonymous(anonymousRef)])], job.id]);
        // Counted before the keys go, once: a later attempt after the rebuild finds none left.
        const leads = job.progress.leads ?? (await pool.query<{ leads: number }>(sql.leadsOfPersons, [accountId, named.users, named.anonymous])).rows[0]?.leads ?? 0;
        if (job.progress.leads === undefined) await pool.query(sql.saveProgress, [job.id, { leads }]);
        counts.set(job.id, {
          keys: 0,
          events: (await pool.query<{ events: number }>(sql.eventsOfPersons, [accountId, named.users, named.anonymous])).rows[0]?.events ?? 0,
          leads,
          rejectedItems: job.progress.rejectedItems ?? 0,
          idempotencyReplies: job.progress.idempotencyReplies ?? 0,
        });
      }
      await this.step('suppressed', accountId);
      const deleted = (): number => [...counts.values()].reduce((sum, c) => sum + c.rejectedItems + c.idempotencyReplies, 0);
      for (let round = 1; ; round += 1) {
        await this.eraseRound(jobs, persons, counts, round);
        await this.step('deciding', accountId);
        const before = deleted();
        const merged = await this.decide(jobs, persons, counts, refs);
        if (merged === 0) {
          // The ids the decision forgot, and rows recorded after this round's vacuum and deleted by it.
          const tables = deleted() > before ? sql.vacuumedTables : sql.vacuumedWhenDone;
          await this.vacuum(tables).catch((error: unknown) => log.warn({ err: error, accountId }, 'vacuum after the erasures failed'));
          break;
        }
        log.info({ accountId, erasures: ids, merged }, 'ids merged into the erased people meanwhile: erasing them too');
      }
      await this.step('done', accountId);
      log.info({ accountId, erasures: ids, seconds: (Date.now() - started) / 1000 }, 'erasures done');
      await this.sweepLateRefusals(jobs, persons).catch((error: unknown) => {
        if (!this.stopped) log.warn({ err: error, accountId }, 'the sweep of late refusals failed');
      });
    } catch (error) {
      const attempts = Math.max(...jobs.map((job) => job.attempts));
      const reason = error instanceof Error ? error.message : String(error);
      log.warn({ err: error, accountId, erasures: ids, attempts }, 'erasure attempt failed');
      await (attempts >= maxAttempts ? pool.query(sql.markFailed, [ids, reason]) : pool.query(sql.releaseForRetry, [ids, retryMs])).catch(() => undefined);
    } finally {
      clearInterval(renew);
    }
  }

  /** Erases the keys of the people, waits until no process holds them, erases again, rebuilds, deletes what names them, vacuums. */
  private async eraseRound(jobs: ErasureJob[], persons: Map<string, Persons>, counts: Map<string, ErasureCounts>, round: number): Promise<void> {
    const { pool } = this.options;
    const accountId = (jobs[0] as ErasureJob).accountId;
    const eraseAll = async (): Promise<void> => {
      for (const job of jobs) await pool.query(eraseKeys, [accountId, (persons.get(job.id) as Persons).keys, job.id]);
    };
    await eraseAll();
    const { rows } = await pool.query<{ keys_erased_at: Date; now: Date }>(sql.markKeysErased, [jobs.map((job) => job.id)]);
    // The first round waits from the first erasure of the keys (an attempt taking over counts from
    // its predecessor's); a later one from its own, which erased ids merged meanwhile.
    const now = rows[0]?.now.getTime() ?? Date.now();
    const first = round === 1 ? Math.min(...rows.map((r) => r.keys_erased_at.getTime())) : now;
    await this.step('keys-erased', accountId);
    // Until no process can hold the keys; items sealed meanwhile with keys made anew (the
    // person was met again before any process knew) are erased by the second pass.
    await sleep(Math.max(0, first + this.settleMs - now));
    await this.step('settled', accountId);
    await eraseAll();
    // Events stored before ids were sealed hold them readable until their person is erased.
    let forgotten = 0;
    for (const job of jobs) forgotten += (await pool.query<{ forgotten: number }>(sql.forgetReadableIds, [accountId, (persons.get(job.id) as Persons).keys])).rows[0]?.forgotten ?? 0;
    // Counted from the keys marked with the erasure, not from what this attempt erased: one that
    // takes over from an attempt cut off after erasing them finds none left to erase.
    for (const job of jobs) {
      const { keys } = persons.get(job.id) as Persons;
      (counts.get(job.id) as ErasureCounts).keys = (await pool.query<{ keys: number }>(sql.keysErasedBy, [accountId, keys, job.id])).rows[0]?.keys ?? 0;
    }
    await this.step('keys-erased-again', accountId);
    await this.rebuild(accountId);
    await this.step('rebuilt', accountId);
    for (const job of jobs) await this.deleteNaming(job, persons, counts, pool);
    await this.step('refusals-deleted', accountId);
    await this.vacuum(forgotten > 0 ? [sql.vacuumedEvents, ...sql.vacuumedTables] : sql.vacuumedTables);
    await this.step('vacuumed', accountId);
  }

  /**
   * Under the merge locks of the erased users: when no id was merged into them since this round
   * read the identity map, deletes again what names the people (refusals and replies recorded
   * since) and marks the erasures done, in one transaction; else adds the new ids for another
   * round. Returns how many ids were merged meanwhile.
   */
  private async decide(jobs: ErasureJob[], persons: Map<string, Persons>, counts: Map<string, ErasureCounts>, refs: AccountRefs): Promise<number> {
    const accountId = (jobs[0] as ErasureJob).accountId;
    const users = jobs.flatMap((job) => (job.userId === null ? [] : [refs.user(job.userId)]));
    return inTransaction(
      this.options.pool,
      async (client) => {
        let merged = 0;
        for (const job of jobs) {
          const before = persons.get(job.id) as Persons;
          const now = await personsOf(client, job, refs);
          // Merges, not ids: the erasure's own anonymous id merged into its user meanwhile came with a profile sealed with a new key of the user.
          const added = now.mergedRefs.filter((ref) => !before.mergedRefs.includes(ref));
          if (added.length > 0) persons.set(job.id, union(before, now));
          merged += added.length;
        }
        if (merged > 0) return merged;
        for (const job of jobs) await this.deleteNaming(job, persons, counts, client);
        for (const job of jobs) {
          const { userRefs, anonymousRefs } = persons.get(job.id) as Persons;
          await client.query(sql.forgetMergedIds, [accountId, userRefs, anonymousRefs]);
          await client.query(sql.markDone, [job.id, counts.get(job.id)]);
        }
        return 0;
      },
      { begin: `BEGIN; ${lockUsers(accountId, users, 'exclusive')}` },
    );
  }

  /** Deletes the refused items and recorded replies that name the people of `job`, adding to its counts. */
  private async deleteNaming(job: ErasureJob, persons: Map<string, Persons>, counts: Map<string, ErasureCounts>, db: Queryable): Promise<void> {
    const { needles } = persons.get(job.id) as Persons;
    const jobCounts = counts.get(job.id) as ErasureCounts;
    // Added to what an earlier attempt deleted, and kept at once for a later one.
    jobCounts.rejectedItems += (await db.query<{ deleted: number }>(sql.deleteRejectedItems, [job.accountId, needles])).rows[0]?.deleted ?? 0;
    jobCounts.idempotencyReplies += (await db.query<{ deleted: number }>(sql.deleteIdempotencyReplies, [job.accountId, needles])).rows[0]?.deleted ?? 0;
    await db.query(sql.saveProgress, [job.id, { rejectedItems: jobCounts.rejectedItems, idempotencyReplies: jobCounts.idempotencyReplies }]);
  }

  /**
   * Refused items are written by their process about once a second (src/activity): one refused
   * before `done` may be written after the decision deleted what named the people. Once every
   * process has written, they are deleted again, by the ids this runner still holds in memory.
   */
  private async sweepLateRefusals(jobs: ErasureJob[], persons: Map<string, Persons>): Promise<void> {
    // Cut short when the process stops: then its own items are written as it closes.
    await sleep(defaultActivitySettings.flushEveryMs + 1_000, undefined, { signal: this.stopping.signal });
    let deleted = 0;
    for (const job of jobs) deleted += (await this.options.pool.query<{ deleted: number }>(sql.deleteRejectedItems, [job.accountId, (persons.get(job.id) as Persons).needles])).rows[0]?.deleted ?? 0;
    if (deleted > 0) await this.vacuum(['ingest_rejected_items']);
  }

  /** Waits for the step hook, when one is set (tests drive interleavings through it). */
  private async step(step: ErasureStep, accountId: string): Promise<void> {
    await this.stepHook?.(step, accountId);
  }

  /** Rebuilds the account's read models and waits until they are caught up (with a worker of its own when none runs: rebuildAccountAndWait). */
  private async rebuild(accountId: string): Promise<void> {
    const { pool, store, log } = this.options;
    // Met later, the account's events are read as they are then: erased.
    if (!(await pool.query<{ projected: boolean }>(sql.accountProjected, [accountId])).rows[0]?.projected) return;
    await rebuildAccountAndWait(pool, store, log, this.projections, accountId, { stopped: () => this.stopped });
  }

  /**
   * Removes the old versions of the rows deleted or changed, once no snapshot can still see them:
   * until then VACUUM would keep them.
   */
  private async vacuum(tables: readonly string[]): Promise<void> {
    const { pool } = this.options;
    const xid = (await pool.query<{ xid: string }>(sql.currentXid)).rows[0]?.xid ?? '0';
    const until = Date.now() + 60_000;
    while (Date.now() < until && ((await pool.query<{ older: number }>(sql.olderSnapshots, [xid])).rows[0]?.older ?? 0) > 0) await sleep(200);
    // VACUUM takes as long as the tables need, beyond the pool's statement timeout.
    const client = await pool.connect();
    try {
      await client.query('SET statement_timeout = 0');
      await client.query({ text: `VACUUM ${tables.join(', ')}`, query_timeout: 0 } as { text: string });
    } finally {
      await client.query('RESET statement_timeout').catch(() => undefined);
      client.release();
    }
  }
}
