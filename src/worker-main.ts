import { startProjectionWorker, workerSettings } from '../projections/index.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createEventStore } from './eventstore/index.js';
import { createLogger } from './logger.js';
import { Metrics } from './metrics.js';
import { startOpsServer } from './ops-server.js';
import { onStopSignals, stopAndExit } from './stop-signals.js';

/**
 * `npm run worker`: a projection worker alone, for scale-out. The workers of every process share
 * the parts of the work (docs/projections.md, Parts, claims and checkpoints); the parts of one that
 * stops or dies go to the others.
 */
const config = loadConfig();
const log = createLogger(config.logLevel);
let stopping = false;
let stop: (() => Promise<void>) | null = null;

// A signal during start-up stops the worker as soon as it is up.
onStopSignals(
  log,
  () => {
    stopping = true;
    if (stop) stopAndExit(log, stop);
  },
  () => {
    log.warn('exiting before the shutdown finished: the projections resume from their checkpoints at the next start');
    process.exit(1);
  },
);

try {
  // Beside `npm start` on the embedded default, the service's running server is used.
  const database = await openDatabase(config, log, { shared: true, ownSession: true });
  await migrate(database.url, log);
  const pool = createPool(database.address, 4, config.queryTimeoutMs);
  const store = createEventStore(config, pool, log);
  const metrics = new Metrics();
  const workers = startProjectionWorker({ ...workerSettings(config), databaseUrl: database.address, store, log, metrics });
  // WORKER_PORT: /livez, /readyz and /metrics of this worker (lag, apply rate, parts held).
  const opsServer = config.workerPort === null ? null : await startOpsServer({
    registry: metrics.registry,
    metricsToken: config.metricsToken,
    pool,
    store,
    log,
    isStopping: () => stopping,
    projectionWorker: () => workers.worker.state,
  }, config.workerPort, config.host);
  log.info({ port: opsServer?.port }, 'projection worker started');
  stop = async () => {
    await opsServer?.close();
    await workers.stop();
    await store.close();
    await pool.end();
    await database.stop();
    log.info('stopped');
  };
  if (stopping) stopAndExit(log, stop);
} catch (error) {
  log.fatal({ err: error }, 'projection worker failed to start');
  process.exit(1);
}
