import { createPool, type ServerAddress } from '../src/db/pool.js';
import { leadsProjection } from './leads/projection.js';
import { productsProjection } from './products/projection.js';
import type { Projection } from './runner/projection.js';
import { ProjectionRunner, type RunnerOptions } from './runner/runner.js';
import { SharedCatchUp } from './runner/shared-catch-up.js';
import { trackIndexProjection } from './track-index/projection.js';
import { userEventsProjection } from './user-events/projection.js';

export type { Projection } from './runner/projection.js';

/** Every projection, each with its own checkpoint, lock and worker. */
export const projections: readonly Projection[] = [leadsProjection, userEventsProjection, productsProjection, trackIndexProjection];

export function projectionNamed(name: string): Projection | undefined {
  return projections.find((p) => p.name === name);
}

/** The workers of one process: one runner per projection, active or standing by. */
export class ProjectionWorkers {
  readonly runners: ProjectionRunner[];

  constructor(options: RunnerOptions, selected: readonly Projection[] = projections) {
    // Runners at the same checkpoint share their reads (a full replay reads the store once, not once per projection).
    const shared = { ...options, store: new SharedCatchUp(options.store) };
    this.runners = selected.map((projection) => new ProjectionRunner(projection, shared));
  }

  start(): this {
    for (const runner of this.runners) runner.start();
    return this;
  }

  /** Events were appended in this process. */
  wake(): void {
    for (const runner of this.runners) runner.wake();
  }

  async stop(): Promise<void> {
    await Promise.all(this.runners.map((runner) => runner.stop()));
  }
}

/** The projection workers of a process, on a pool of their own (each keeps one connection). */
export function startProjectionWorkers(options: Omit<RunnerOptions, 'pool'> & { databaseUrl: ServerAddress; queryTimeoutMs: number }): {
  workers: ProjectionWorkers;
  stop(): Promise<void>;
} {
  const { databaseUrl, queryTimeoutMs, ...runnerOptions } = options;
  // A rebuild's batches are larger than requests' queries: more time before one is given up.
  const pool = createPool(databaseUrl, projections.length + 2, Math.max(queryTimeoutMs, 60_000));
  const workers = new ProjectionWorkers({ ...runnerOptions, pool }).start();
  return {
    workers,
    stop: async () => {
      await workers.stop();
      await pool.end();
    },
  };
}
