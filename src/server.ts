import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createApp } from './http/app.js';
import type { Logger } from './logger.js';
import { createServices, type Services } from './services.js';

export interface RunningService {
  port: number;
  databaseUrl: string;
  services: Services;
  /** Graceful stop: refuse new requests, answer those in flight, flush appends, close the database. */
  stop(): Promise<void>;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve((server.address() as AddressInfo).port));
  });
}

/** How long a stopping service keeps answering (with Connection: close) before it closes connections. */
const drainMs = 1_000;

export async function startService(config: Config, log: Logger): Promise<RunningService> {
  const database = await openDatabase(config, log);
  try {
    await migrate(database.url, log);
  } catch (error) {
    await database.stop();
    throw error;
  }
  const pool = createPool(database.url, 20, config.queryTimeoutMs);
  const services = createServices(config, pool, log);
  let shuttingDown = false;
  const app = createApp(services, { isShuttingDown: () => shuttingDown });
  const server = createServer({ keepAliveTimeout: 5_000 }, app);
  const port = await listen(server, config.port);
  log.info({ port }, 'tracking ingestion service listening');

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      shuttingDown = true;
      log.info('shutting down: no new requests, finishing those in flight');
      // First every keep-alive connection gets to end after its next reply (Connection: close) and
      // /healthz turns 503: closing a connection that looks idle races with a request its client
      // may be sending at that moment, which the client could not tell from a lost one.
      await new Promise((resolve) => setTimeout(resolve, drainMs));
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A connection still open after the grace period has a request that would not finish: cut it.
      const force = setTimeout(() => server.closeAllConnections(), 15_000);
      await closed;
      clearTimeout(force);
      await services.store.close();
      await pool.end();
      await database.stop();
      log.info('stopped');
    })();
    return stopping;
  };
  return { port, databaseUrl: database.url, services, stop };
}
