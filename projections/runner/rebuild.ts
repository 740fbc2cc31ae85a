import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from '../../src/db/pool.js';
import type { Logger } from '../../src/logger.js';
import * as sql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import type { Projection } from './projection.js';
import { inTransaction } from '../../src/db/transaction.js';
import { neverAppends } from '../../src/eventstore/postgres-sql.js';
import { projections } from '../index.js';
import * as accountsSql from './accounts-sql.js';
import * as claimsSql from './claims-sql.js';
import * as parkedSql from './parked-sql.js';
import { rebuildOf, type RebuildStatus } from './status.js';
import { ProjectionWorker, type WorkerStore } from './worker.js';

export interface RebuildProgress {
  applied: number;
  /** Events to replay, counted when the rebuild started; null until it has. */
  target: number | null;
}

export interface RebuildResult {
  events: number;
  seconds: number;
  /** Whether this process took part in the replay (no worker was alive), rather than the workers alone. */
  ranHere: boolean;
}

/**
 * Asks the workers to rebuild a projection, and returns at once (the operator API; follow it
 * in the status). `requested` is false, with the rebuild under way, when one was already asked for
 * or running: asking again would restart it.
 */
export async function requestRebuildWithoutWaiting(pool: Pool, projection: Projection): Promise<{ requested: boolean; rebuild: RebuildStatus | null }> {
  const underWay = async (): Promise<RebuildStatus | null> => {
    const rebuild = rebuildOf((await pool.query<CheckpointRow>(sql.selectCheckpoint, [projection.name])).rows[0]);
    return rebuild && rebuild.state !== 'finished' ? rebuild : null;
  };
  // Read first, without locking: the row stays locked while a batch of the rebuild commits, and a
  // request that changes nothing need not wait for it.
  const current = await underWay();
  if (current) return { requested: false, rebuild: current };
  const requested = (await pool.query<CheckpointRow>(sql.requestRebuildUnlessUnderWay, [projection.name])).rows[0];
  if (requested) return { requested: true, rebuild: rebuildOf(requested) };
  // Asked for by someone else meanwhile.
  return { requested: false, rebuild: await underWay() };
}

/**
 * Rebuilds projections: their read models are emptied and every stored event replayed, while the
 * API goes on accepting items. The workers, wherever they run, do the work; with none alive, a
 * worker started in this process does (and stops at the end). Resolves when every projection's
 * replay has caught up with the store.
 */
export async function rebuildProjections(
  pool: Pool,
  store: WorkerStore,
  selected: readonly Projection[],
  options: {
    log: Logger;
    batchSize?: number;
    /** Lanes of the worker started here, if one is (the pool needs as many connections, and five more). */
    lanes?: number;
    onProgress?: (projection: Projection, progress: RebuildProgress) => void;
    pollMs?: number;
  },
): Promise<(RebuildResult & { projection: string })[]> {
  const requestedAt = new Map<string, number>();
  for (const projection of selected) {
    const requested = (await pool.query<CheckpointRow>(sql.requestRebuild, [projection.name])).rows[0] as CheckpointRow;
    requestedAt.set(projection.name, (requested.rebuild_requested_at as Date).getTime());
  }
  // With no worker alive, one here does the rebuild; if one starts meanwhile, they share the parts.
  let worker: ProjectionWorker | null = null;
  const live = (await pool.query<{ live: number }>(claimsSql.liveWorkers)).rows[0]?.live ?? 0;
  if (live === 0) worker = new ProjectionWorker({ pool, store, log: options.log, projections, batchSize: options.batchSize, lanes: options.lanes ?? 2 }).start();
  const results = new Map<string, RebuildResult & { projection: string }>();
  try {
    while (results.size < selected.length) {
      const { rows } = await pool.query<CheckpointRow>(sql.selectCheckpoints);
      const applied = await pool.query<{ projection: string; applied: string }>(sql.appliedByProjection);
      for (const projection of selected) {
        if (results.has(projection.name)) continue;
        const row = rows.find((r) => r.projection === projection.name);
        const started = row?.rebuild_started_at && row.rebuild_started_at.getTime() >= (requestedAt.get(projection.name) ?? 0) && !row.rebuild_requested_at;
        if (!row || !started) {
          options.onProgress?.(projection, { applied: 0, target: null });
          continue;
        }
        const events = Number(applied.rows.find((r) => r.projection === projection.name)?.applied ?? 0);
        options.onProgress?.(projection, { applied: events, target: row.rebuild_target });
        if (row.rebuild_finished_at) {
          const seconds = (row.rebuild_finished_at.getTime() - (row.rebuild_started_at as Date).getTime()) / 1000;
          results.set(projection.name, { projection: projection.name, events, seconds, ranHere: worker !== null && worker.hasHeldParts });
        }
      }
      if (results.size < selected.length) await sleep(options.pollMs ?? 200);
    }
  } finally {
    await worker?.stop();
  }
  return selected.map((p) => results.get(p.name) as RebuildResult & { projection: string });
}

/** Read-model rows of one account, per table: most carry the account; repeats are found through their first copy. */
const accountRows = (table: string): string =>
  table === 'track_index_repeats'
    ? 'DELETE FROM track_index_repeats r USING track_index t WHERE t.event_id = r.event_id AND t.account_id = $1'
    : `DELETE FROM ${table} WHERE account_id = $1`;

/**
 * Rebuilds the read models of one account: its rows, cursors, parked events and applied ids go, in
 * one transaction, and the workers holding its part replay its events (from before its first one)
 * while every other account's projections go on. Returns at once; `accountCaughtUp` tells when done.
 */
export async function rebuildAccount(pool: Pool, selected: readonly Projection[], accountId: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query(neverAppends);
    for (const projection of selected) {
      // The cursors first: a batch of the account in flight holds its cursor, and ends before it goes.
      await client.query(accountsSql.forgetCursor, [projection.name, accountId]);
      // The repeats are found through the track index's rows, so they go first.
      for (const table of [...projection.tables].sort((a) => (a === 'track_index_repeats' ? -1 : 0))) await client.query(accountRows(table), [accountId]);
      await client.query(parkedSql.forgetParkedOfAccount, [projection.name, accountId]);
      await client.query(sql.forgetAppliedEventIdsOfAccount, [projection.name, accountId]);
    }
    await client.query(accountsSql.markReset, [accountId]);
  });
}

/**
 * Rebuilds one account (rebuildAccount) and resolves once its cursors have caught up. With no
 * worker alive, one started here does the replay, and stops at the end; it is looked for again
 * every few seconds while waiting, so that a worker dying meanwhile does not leave the wait without
 * end. Gives up (throws) once `stopped` says so. Says whether a worker of this process took part.
 */
export async function rebuildAccountAndWait(
  pool: Pool,
  store: WorkerStore,
  log: Logger,
  selected: readonly Projection[],
  accountId: string,
  { pollMs = 200, stopped = () => false }: { pollMs?: number; stopped?: () => boolean } = {},
): Promise<{ ranHere: boolean }> {
  let worker: ProjectionWorker | null = null;
  const ensureWorker = async (): Promise<void> => {
    if (worker || ((await pool.query<{ live: number }>(claimsSql.liveWorkers)).rows[0]?.live ?? 0) > 0) return;
    worker = new ProjectionWorker({ pool, store, log, projections, lanes: 2 }).start();
  };
  const looksPerCheck = Math.max(1, Math.round(5_000 / pollMs));
  try {
    // Started before the rows go, so that a failure to start leaves the read models as they were.
    await ensureWorker();
    await rebuildAccount(pool, selected, accountId);
    for (let looks = 1; !(await accountCaughtUp(pool, selected, accountId)); looks += 1) {
      if (stopped()) throw new Error('stopped before the rebuild was done');
      if (looks % looksPerCheck === 0) await ensureWorker();
      await sleep(pollMs);
    }
  } finally {
    await (worker as ProjectionWorker | null)?.stop();
  }
  return { ranHere: worker !== null };
}

/** Whether every selected projection's cursor of the account has caught up since it was made again. */
export async function accountCaughtUp(pool: Pool, selected: readonly Projection[], accountId: string): Promise<boolean> {
  const { rows } = await pool.query<{ projection: string }>(accountsSql.caughtUpCursorsOfAccount, [accountId]);
  return selected.every((p) => rows.some((r) => r.projection === p.name));
}
