import type { Config } from '../src/config.js';
import { createPool, type ServerAddress } from '../src/db/pool.js';
import { leadsProjection } from './leads/projection.js';
import { productsProjection } from './products/projection.js';
import type { Projection } from './runner/projection.js';
import { ProjectionWorker, type WorkerOptions } from './runner/worker.js';
import { trackIndexProjection } from './track-index/projection.js';
import { userEventsProjection } from './user-events/projection.js';

export type { Projection } from './runner/projection.js';
export { ProjectionWorker } from './runner/worker.js';

/** Batches a worker applies at once. */
export const defaultLanes = 4;

/** Every projection: each applies every account's events on cursors of its own. */
export const projections: readonly Projection[] = [leadsProjection, userEventsProjection, productsProjection, trackIndexProjection];

export function projectionNamed(name: string): Projection | undefined {
  return projections.find((p) => p.name === name);
}

/** The worker's settings from the environment (PROJECTION_*, QUERY_TIMEOUT_MS). */
export function workerSettings(config: Config): Pick<WorkerOptions, 'batchSize' | 'pollMs' | 'leaseMs' | 'lanes'> & { queryTimeoutMs: number } {
  return {
    queryTimeoutMs: config.queryTimeoutMs,
    batchSize: config.projectionBatchSize,
    pollMs: config.projectionPollMs,
    leaseMs: config.projectionLeaseMs,
    lanes: config.projectionLanes,
  };
}

/**
 * The projection worker of a process, on a pool of its own: one connection per lane, and one each
 * for the heartbeat, discovery, the lag report and the index builds that end a rebuild.
 */
export function startProjectionWorker(
  options: Omit<WorkerOptions, 'pool' | 'projections'> & { databaseUrl: ServerAddress; queryTimeoutMs: number; projections?: readonly Projection[] },
): {
  worker: ProjectionWorker;
  stop(): Promise<void>;
} {
  const { databaseUrl, queryTimeoutMs, ...workerOptions } = options;
  const lanes = workerOptions.lanes ?? defaultLanes;
  // A rebuild's batches are larger than requests' queries: more time before one is given up.
  const pool = createPool(databaseUrl, lanes + 4, Math.max(queryTimeoutMs, 60_000));
  const worker = new ProjectionWorker({ projections, ...workerOptions, lanes, pool }).start();
  return {
    worker,
    stop: async () => {
      await worker.stop();
      await pool.end();
    },
  };
}
