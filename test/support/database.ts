import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { withDatabase } from '../../src/db/pool.js';
import { createLogger } from '../../src/logger.js';

/**
 * Tests run against a real PostgreSQL: DATABASE_URL's server when set, otherwise an embedded one
 * started for the run. Migrations are applied once to a template database; every test database is
 * a fresh clone of it.
 */
interface TestServer {
  serverUrl: string;
  templateName: string;
  embedded: EmbeddedServer | null;
  dataDir: string | null;
}

let server: TestServer | null = null;
let counter = 0;
const silentLog = createLogger('silent');

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testServer().serverUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function testServer(): TestServer {
  if (!server) throw new Error('the test database server is not started (test/support/hooks.ts)');
  return server;
}

export function testServerStarted(): boolean {
  return server !== null;
}

export async function startTestServer(): Promise<void> {
  let serverUrl = process.env.DATABASE_URL;
  let embedded: EmbeddedServer | null = null;
  let dataDir: string | null = null;
  if (!serverUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'tracking-test-pg-'));
    embedded = await startEmbeddedPostgres(dataDir, silentLog);
    serverUrl = embedded.url;
  }
  const templateName = `tracking_template_${process.pid}`;
  server = { serverUrl, templateName, embedded, dataDir };
  await admin(async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${templateName}`);
    await client.query(`CREATE DATABASE ${templateName}`);
  });
  await migrate(withDatabase(serverUrl, templateName), silentLog);
}

export async function stopTestServer(): Promise<void> {
  if (!server) return;
  const { templateName, embedded, dataDir } = server;
  await admin((client) => client.query(`DROP DATABASE IF EXISTS ${templateName} WITH (FORCE)`)).catch(() => undefined);
  if (embedded) await embedded.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  server = null;
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A new database cloned from the migrated template. */
export async function freshDatabase(): Promise<TestDatabase> {
  const { serverUrl, templateName } = testServer();
  counter += 1;
  const name = `tracking_test_${process.pid}_${counter}`;
  await admin((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${templateName}`));
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Whether the tests run on an embedded server this process started (with the service's own settings), not on DATABASE_URL's. */
export function testServerIsEmbedded(): boolean {
  return testServer().embedded !== null;
}

/** Runs SQL as the server's administrator (for example to refuse connections to a test database). */
export function asAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  return admin(work);
}

/** The trackIDs of every event stored in the database at `databaseUrl`. */
export async function storedTrackIds(databaseUrl: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>("SELECT metadata->>'trackId' AS id FROM events");
    return new Set(rows.map((row) => row.id));
  } finally {
    await client.end();
  }
}
