import { createPool, type Pool } from '../../src/db/pool.js';
import { EsdbEventStore } from '../../src/eventstore/esdb.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { PostgresEventStore } from '../../src/eventstore/postgres.js';
import { createLogger } from '../../src/logger.js';
import { asAdmin, freshDatabase, type TestDatabase } from './database.js';
import { EsdbTestServer } from '../../testing/esdb-test-server.js';

/** A store under test, with the means to take its server away and bring it back. */
export interface StoreUnderTest {
  store: EventStore;
  /** Another client of the same store, as a second process would have. */
  secondClient(): EventStore;
  /** The server goes away (connections refused) and comes back; null where the test cannot do it. */
  outage: { down(): Promise<void>; up(): Promise<void> } | null;
  close(): Promise<void>;
}

export interface StoreKind {
  name: string;
  /** A store for one test; with a shared real server, what other tests stored is there too. */
  open(): Promise<StoreUnderTest>;
  /** A store whose server cannot be reached at all. */
  unreachable(): Promise<{ store: EventStore; close(): Promise<void> }>;
}

const silent = createLogger('silent');
const timeoutMs = 3_000;

/** EventStoreDB: the real server of ESDB_CONNECTION_STRING when set, otherwise the test double. */
export const realEsdbServer = process.env.ESDB_CONNECTION_STRING || null;

export const esdbKind: StoreKind = {
  name: realEsdbServer ? 'EventStoreDB (ESDB_CONNECTION_STRING)' : 'EventStoreDB (test double server)',
  async open() {
    const server = realEsdbServer ? null : await EsdbTestServer.start();
    const url = realEsdbServer ?? (server as EsdbTestServer).connectionString;
    const clients: EsdbEventStore[] = [];
    const client = (): EsdbEventStore => {
      const store = new EsdbEventStore(url, { log: silent, timeoutMs });
      clients.push(store);
      return store;
    };
    return {
      store: client(),
      secondClient: client,
      outage: server ? { down: () => server.stop(), up: () => server.restart() } : null,
      async close() {
        await Promise.all(clients.map((c) => c.close()));
        await server?.close();
      },
    };
  },
  async unreachable() {
    // A port nothing listens on: a stopped test double's.
    const server = await EsdbTestServer.start();
    await server.close();
    const store = new EsdbEventStore(server.connectionString, { log: silent, timeoutMs });
    return { store, close: () => store.close() };
  },
};

export const postgresKind: StoreKind = {
  name: 'Postgres',
  async open() {
    const database = await freshDatabase();
    const pools: Pool[] = [];
    const stores: PostgresEventStore[] = [];
    const client = (): PostgresEventStore => {
      const pool = createPool(database.url, 10, timeoutMs);
      pools.push(pool);
      const store = new PostgresEventStore(pool);
      stores.push(store);
      return store;
    };
    return {
      store: client(),
      secondClient: client,
      outage: { down: () => allowConnections(database, false), up: () => allowConnections(database, true) },
      async close() {
        await allowConnections(database, true);
        await Promise.all(stores.map((s) => s.close()));
        await Promise.all(pools.map((p) => p.end()));
        await database.drop();
      },
    };
  },
  async unreachable() {
    const pool = createPool('postgres://nobody@127.0.0.1:1/none', 2, timeoutMs);
    const store = new PostgresEventStore(pool);
    return { store, close: () => store.close().then(() => pool.end()) };
  },
};

/** Refuses (and cuts) or allows connections to a test database: the database going away and back. */
export function allowConnections(database: TestDatabase, allow: boolean): Promise<void> {
  return asAdmin(async (client) => {
    await client.query(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS ${allow}`);
    if (!allow) {
      await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [database.name]);
    }
  });
}
