import { projections } from '../projections/index.js';
import { rebuildProjection, type RebuildResult } from '../projections/runner/rebuild.js';
import { SharedCatchUp } from '../projections/runner/shared-catch-up.js';
import { loadConfig } from '../src/config.js';
import { createPool } from '../src/db/pool.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { createLogger } from '../src/logger.js';

/**
 * The rebuild of the bench in a process of its own, so that its CPU is measured apart and a rebuild
 * that overruns the time limit can be stopped (SIGTERM: the batches in flight are rolled back).
 * Every projection is rebuilt at once with `rebuildProjection`, no worker being active: this
 * process replays, on pools shaped as those of a worker process (startProjectionWorkers,
 * worker-main). Talks to the bench over IPC: 'started', 'progress', 'finished' (one projection)
 * and 'done' messages.
 */

export type RebuildMessage =
  | { type: 'started' }
  | { type: 'progress'; projection: string; applied: number; target: number | null }
  | { type: 'finished'; result: RebuildResult & { projection: string } }
  | { type: 'done' };

const url = process.env.BENCH_STORE_URL;
if (!url || !process.send) throw new Error('run by the bench (BENCH_STORE_URL, IPC)');
const send = (message: RebuildMessage): void => void process.send?.(message);

const config = loadConfig();
const log = createLogger('warn');
const runnerPool = createPool(url, projections.length + 2, Math.max(config.queryTimeoutMs, 60_000));
const storePool = createPool(url, 4, config.queryTimeoutMs);
const store = new PostgresEventStore(storePool);
// As a worker process does: the four runners share their reads of the store.
const source = new SharedCatchUp(store);
send({ type: 'started' });
await Promise.all(
  projections.map(async (projection) => {
    const result = await rebuildProjection(runnerPool, store, projection, {
      log,
      batchSize: config.projectionBatchSize,
      source,
      onProgress: ({ applied, target }) => send({ type: 'progress', projection: projection.name, applied, target }),
    });
    send({ type: 'finished', result: { projection: projection.name, ...result } });
  }),
);
await new Promise((resolve) => process.send?.({ type: 'done' } satisfies RebuildMessage, resolve));
await runnerPool.end();
await storePool.end();
process.disconnect();
