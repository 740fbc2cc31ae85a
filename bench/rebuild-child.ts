import { projections } from '../projections/index.js';
import { defaultLanes } from '../projections/index.js';
import { rebuildProjections, type RebuildResult } from '../projections/runner/rebuild.js';
import { loadConfig } from '../src/config.js';
import { createPool } from '../src/db/pool.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { createLogger } from '../src/logger.js';

/**
 * The rebuild of the bench in a process of its own, so that its CPU is measured apart and a rebuild
 * that overruns the time limit can be stopped (SIGTERM: the batches in flight are rolled back).
 * Every projection is rebuilt at once with `rebuildProjections`, no worker being alive: a worker
 * in this process replays, on a pool shaped as that of a worker process (startProjectionWorker,
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
const runnerPool = createPool(url, defaultLanes + 5, Math.max(config.queryTimeoutMs, 60_000));
const storePool = createPool(url, 4, config.queryTimeoutMs);
const store = new PostgresEventStore(storePool);
send({ type: 'started' });
const results = await rebuildProjections(runnerPool, store, projections, {
  log,
  batchSize: config.projectionBatchSize,
  lanes: defaultLanes,
  onProgress: (projection, { applied, target }) => send({ type: 'progress', projection: projection.name, applied, target }),
});
for (const result of results) send({ type: 'finished', result });
await new Promise((resolve) => process.send?.({ type: 'done' } satisfies RebuildMessage, resolve));
await runnerPool.end();
await storePool.end();
process.disconnect();
