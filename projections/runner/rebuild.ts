import type { Pool } from '../../src/db/pool.js';
import type { EventStore } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import * as sql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import type { Projection } from './projection.js';
import { ProjectionRunner } from './runner.js';
import type { CatchUpSource } from './shared-catch-up.js';
import { rebuildOf, type RebuildStatus } from './status.js';

export interface RebuildProgress {
  applied: number;
  /** Events to replay, counted when the rebuild started; null until it has. */
  target: number | null;
}

export interface RebuildResult {
  events: number;
  seconds: number;
  /** Whether this process replayed the events (no worker was active), rather than the active worker. */
  ranHere: boolean;
}

/**
 * Asks the active worker to rebuild a projection, and returns at once (the operator API; follow it
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Rebuilds a projection: its read models are emptied and every stored event replayed, while the
 * API goes on accepting items. The active worker, wherever it runs, does the work; with none
 * active, this process does. Resolves when the replay has caught up with the store.
 */
export async function rebuildProjection(
  pool: Pool,
  store: EventStore,
  projection: Projection,
  options: {
    log: Logger;
    batchSize?: number;
    onProgress?: (progress: RebuildProgress) => void;
    pollMs?: number;
    /** What a replay in this process reads; a SharedCatchUp lets several rebuilt at once read the store once. */
    source?: CatchUpSource;
  },
): Promise<RebuildResult> {
  const requested = (await pool.query<CheckpointRow>(sql.requestRebuild, [projection.name])).rows[0] as CheckpointRow;
  const requestedAt = (requested.rebuild_requested_at as Date).getTime();
  // With no worker active, a runner here takes the lock and does the rebuild; if a worker starts
  // first, this runner merely stands by, and the loop below follows that worker's progress. The
  // same holds if the active worker goes away before the rebuild is done.
  let runner: ProjectionRunner | null = null;
  const runHereUnlessActive = async (): Promise<void> => {
    if (runner) return;
    const holders = await pool.query<{ lock_key: number }>(sql.lockHolders);
    if (holders.rows.some((h) => h.lock_key === projection.lockKey)) return;
    runner = new ProjectionRunner(projection, {
      pool,
      store: options.source ?? store,
      log: options.log,
      batchSize: options.batchSize,
      untilCaughtUp: true,
    }).start();
  };
  try {
    for (;;) {
      await runHereUnlessActive();
      const row = (await pool.query<CheckpointRow>(sql.selectCheckpoint, [projection.name])).rows[0];
      const started = row?.rebuild_started_at && row.rebuild_started_at.getTime() >= requestedAt && !row.rebuild_requested_at;
      if (row && started) {
        options.onProgress?.({ applied: row.events_applied, target: row.rebuild_target });
        if (row.rebuild_finished_at) {
          const seconds = (row.rebuild_finished_at.getTime() - (row.rebuild_started_at as Date).getTime()) / 1000;
          return { events: row.events_applied, seconds, ranHere: (runner as ProjectionRunner | null)?.hasBeenActive ?? false };
        }
      } else {
        options.onProgress?.({ applied: 0, target: null });
      }
      await sleep(options.pollMs ?? 200);
    }
  } finally {
    await (runner as ProjectionRunner | null)?.stop();
  }
}
