import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer, type AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createApp } from './http/app.js';
import { createHttpServer } from './http/client-errors.js';
import type { Logger } from './logger.js';
import { createServiceParts, type ServiceParts } from './service-parts.js';
import { startProjectionThread } from '../projections/thread-host.js';

export interface RunningService {
  port: number;
  databaseUrl: string;
  services: ServiceParts;
  /** Graceful stop: refuse new requests, answer those in flight, flush appends, close the database. */
  stop(): Promise<void>;
}

/** Listens on `host` (HOST; every interface when unset). */
function listen(server: Server, port: number, host: string | undefined): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

const forgetKeysEveryMs = 60 * 60 * 1000;

/** `ownSession`: the caller stops the service on SIGINT and SIGTERM (src/main.ts); see openDatabase. */
export async function startService(config: Config, log: Logger, { ownSession = false } = {}): Promise<RunningService> {
  const database = await openDatabase(config, log, { ownSession });
  try {
    await migrate(database.url, log);
  } catch (error) {
    await database.stop();
    throw error;
  }
  const pool = createPool(database.address, 20, config.queryTimeoutMs);
  const services = createServiceParts(config, pool, log);
  // The projections of `npm start` run in a thread of their own (projections/thread-host.ts).
  const projections = config.runProjections ? startProjectionThread(config, log) : null;
  if (projections) {
    services.appends.on('appended', (accountIds) => projections.wake(accountIds));
    services.metrics.include(() => projections.metrics());
  }
  let shuttingDown = false;
  const app = createApp(services, { isShuttingDown: () => shuttingDown });
  const server = createHttpServer(app, { keepAliveTimeoutMs: 5_000, requestTimeoutSeconds: config.requestTimeoutSeconds });
  // Replies not yet sent, so that a stop can make each of them end its connection.
  const unanswered = new Set<ServerResponse>();
  server.on('request', (_req, res: ServerResponse) => {
    unanswered.add(res);
    res.on('close', () => unanswered.delete(res));
  });
  const { port, address } = await listen(server, config.port, config.host);
  log.info({ address, port }, 'tracking ingestion service listening');
  services.erasures.start();
  if (!config.adminToken) log.warn('ADMIN_TOKEN is not set: POST /admin/v1/accounts answers 401, so accounts can be created only with `tracking accounts create`');
  const forgetKeys = setInterval(() => {
    services.idempotency.forgetExpired().catch((error: unknown) => log.warn({ err: error }, 'expired idempotency keys not deleted'));
  }, forgetKeysEveryMs).unref();

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      shuttingDown = true;
      services.feedWaits.stop();
      clearInterval(forgetKeys);
      log.info('shutting down: no new connections, finishing the requests in flight');
      // Every reply from now on ends its connection (Connection: close), also those in flight, so
      // clients learn of the end from a reply, never from a connection cut under a request.
      for (const res of unanswered) if (!res.headersSent) res.shouldKeepAlive = false;
      // Stop accepting connections but keep the open ones (http's close would also cut idle ones).
      const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
      // Idle keep-alive connections are not closed here: a client may be sending on one at that
      // very moment and would see it reset under its request. They end at their keep-alive
      // timeout, closed by the client first (it is told the timeout in every reply's Keep-Alive
      // header) or else by the server. A connection still open after the grace period has a
      // request that would not finish: cut it.
      const force = setTimeout(() => server.closeAllConnections(), 15_000);
      await closed;
      clearTimeout(force);
      // The workers and the erasures read the store: they stop before it closes.
      await services.erasures.stop();
      await projections?.stop();
      await services.store.close();
      // The last second of ingest activity is written while the pool is still open.
      await services.activity.close();
      await pool.end();
      await database.stop();
      log.info('stopped');
    })();
    return stopping;
  };
  return { port, databaseUrl: database.url, services, stop };
}
