import { parentPort, workerData } from 'node:worker_threads';
import { openedDatabaseAddress } from '../src/db/database.js';
import { createPool } from '../src/db/pool.js';
import { createEventStore } from '../src/eventstore/index.js';
import { createLogger } from '../src/logger.js';
import { Metrics } from '../src/metrics.js';
import { startProjectionWorker, workerSettings } from './index.js';
import type { FromProjectionThread, ProjectionThreadData, ToProjectionThread } from './thread-host.js';

/**
 * The projection thread of `npm start` (thread-host.ts): the worker of `npm run worker`, on the
 * database the service opened, woken by the service's appends and asked for its metrics.
 */
if (!parentPort) throw new Error('thread-entry.js runs as a worker thread of the service');
const port = parentPort;

/**
 * Smaller batches than a worker process's (5,000): the service's process holds the API's heap and
 * this thread's, and with batches of 5,000 profiles it peaked at 303 to 334 MB under users bulk,
 * against 255 to 257 MB with 1,000 (docs/performance.md, run I); freshness and the import to
 * visible did not change with it.
 */
const threadBatchSize = 1_000;
const { config, logLevel } = workerData as ProjectionThreadData;
const log = createLogger(logLevel);
const address = await openedDatabaseAddress(config, log);
const pool = createPool(address, 4, config.queryTimeoutMs);
const store = createEventStore(config, pool, log);
// The process's own metrics (CPU, memory, event loop) are the service thread's.
const metrics = new Metrics(false);
const workers = startProjectionWorker({
  ...workerSettings(config),
  batchSize: config.projectionBatchSize ?? threadBatchSize,
  databaseUrl: address,
  store,
  log,
  metrics,
});

const reply = (message: FromProjectionThread): void => port.postMessage(message);
let stopping: Promise<void> | null = null;
port.on('message', (message: ToProjectionThread) => {
  switch (message.type) {
    case 'wake':
      workers.worker.wake(message.accountIds);
      return;
    case 'metrics':
      void metrics.registry.getMetricsAsJSON().then((json) => reply({ type: 'metrics', request: message.request, metrics: json }));
      return;
    case 'stop':
      stopping ??= (async () => {
        await workers.stop();
        await store.close();
        await pool.end();
        // In a worker thread this ends the thread, not the process: whatever handle a client left open.
        process.exit(0);
      })();
  }
});
