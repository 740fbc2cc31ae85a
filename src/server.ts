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

export async function startService(config: Config, log: Logger): Promise<RunningService> {
  const database = await openDatabase(config, log);
  try {
    await migrate(database.url, log);
  } catch (error) {
    await database.stop();
    throw error;
  }
  const pool = createPool(database.url);
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
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Keep-alive connections that stay busy are cut after a grace period.
      const force = setTimeout(() => server.closeAllConnections(), 10_000);
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
