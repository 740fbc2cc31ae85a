import { access } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { runningEmbeddedServer, startEmbeddedPostgres } from './embedded.js';
import { databaseExists } from './database-sql.js';
import { withDatabase, type ServerAddress } from './pool.js';

export interface Database {
  /** The connection string now (for one-off work at start: migrations). */
  url: string;
  /** Where to connect for pools that live on: an embedded server may move (see runningEmbeddedServer). */
  address: ServerAddress;
  /** Stops the embedded server, if this process started one. */
  stop(): Promise<void>;
  /** Whether the embedded database was made just now: DATA_DIR held none. */
  created: boolean;
}

/** Whether DATA_DIR holds an embedded database: its credentials and an initialised cluster. */
export async function embeddedDatabaseExists(dataDir: string): Promise<boolean> {
  const found = (path: string) => access(path).then(() => true, () => false);
  return (await found(join(dataDir, 'credentials.json'))) && (await found(join(dataDir, 'pg', 'PG_VERSION')));
}

const embeddedDatabaseName = 'tracking';

async function ensureDatabase(serverUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query(databaseExists, [name]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}

export interface OpenOptions {
  /** Use an embedded server already running on DATA_DIR (the service's) if there is one. */
  shared?: boolean;
  /** An embedded server started now runs in a session of its own: this process stops it on signals. */
  ownSession?: boolean;
}

/**
 * Where another thread of this process connects to the database it opened: DATABASE_URL, or the
 * embedded server running on DATA_DIR, followed if it is started again on another port.
 */
export async function openedDatabaseAddress(config: Config, log: Logger): Promise<ServerAddress> {
  if (config.databaseUrl) return config.databaseUrl;
  const running = await runningEmbeddedServer(config.dataDir, log);
  if (!running) throw new Error(`no embedded PostgreSQL running on ${config.dataDir}`);
  return () => withDatabase(running(), embeddedDatabaseName);
}

/** DATABASE_URL when set; otherwise the embedded server, started now, with its own database. */
export async function openDatabase(config: Config, log: Logger, { shared = false, ownSession = false }: OpenOptions = {}): Promise<Database> {
  if (config.databaseUrl) return { url: config.databaseUrl, address: config.databaseUrl, stop: async () => undefined, created: false };
  const running = shared ? await runningEmbeddedServer(config.dataDir, log) : null;
  if (running) {
    const address = (): string => withDatabase(running(), embeddedDatabaseName);
    return { url: address(), address, stop: async () => undefined, created: false };
  }
  const created = !(await embeddedDatabaseExists(config.dataDir));
  const server = await startEmbeddedPostgres(config.dataDir, log, { ownSession });
  try {
    await ensureDatabase(server.url, embeddedDatabaseName);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    url: withDatabase(server.url, embeddedDatabaseName),
    address: () => withDatabase(server.url, embeddedDatabaseName),
    stop: () => server.stop(),
    created,
  };
}
