import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { createApp } from '../../src/http/app.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { Metrics } from '../../src/metrics.js';
import { createServiceParts, type ServiceParts } from '../../src/service-parts.js';
import { fromStored } from '../../src/eventstore/events.js';
import { PersonKeys } from '../../src/eventstore/person-keys.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { openEvents } from '../../src/eventstore/sealed-store.js';
import { freshDatabase, type TestDatabase } from './database.js';
import { until } from './eventually.js';
import { EsdbTestServer } from '../../testing/esdb-test-server.js';
import { startProjectionWorker } from '../../projections/index.js';
import { accountBacklogs } from '../../projections/runner/status.js';

export interface StartOptions {
  /** The database of another TestApp: two apps on one database behave like two processes. */
  database?: TestDatabase;
  log?: Logger;
  /** Also run the projection workers, as `npm start` does. */
  projections?: boolean;
  /** Run the erasure runner, as `npm start` does (default); false leaves erasures pending. */
  erasureRunner?: boolean;
}

export const adminToken = 'test-admin-token';

export interface Credentials {
  licenseCode: string;
  accessToken: string;
}

export interface Reply<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

export interface PostOptions {
  /** The Authorization header as sent; default `Bearer <token>`. */
  authorization?: string | null;
  headers?: Record<string, string>;
  /** Raw body text (or bytes, such as a gzip stream) instead of JSON. */
  raw?: string | Uint8Array;
}

/**
 * TEST_EVENT_STORE=esdb (the second pass of `npm test`): apps keep their events in an EventStoreDB
 * test double, one per test database, shared by the apps on that database like one server.
 */
export const eventStoreUnderTest: 'postgres' | 'esdb' = process.env.TEST_EVENT_STORE === 'esdb' ? 'esdb' : 'postgres';
const esdbSelected = eventStoreUnderTest === 'esdb';
const esdbServers = new Map<string, EsdbTestServer>();

async function eventStoreFor(database: TestDatabase, owner: boolean): Promise<Partial<Config>> {
  if (!esdbSelected) return {};
  let server = esdbServers.get(database.name);
  if (!server && owner) {
    server = await EsdbTestServer.start();
    esdbServers.set(database.name, server);
  }
  return server ? { eventStoreUrl: server.connectionString } : {};
}

/** The HTTP app on a fresh database, served on a loopback port. */
export class TestApp {
  private constructor(
    readonly baseUrl: string,
    readonly services: ServiceParts,
    readonly pool: Pool,
    readonly database: TestDatabase,
    private readonly server: Server,
    private readonly ownsDatabase: boolean,
    private readonly workers: { stop(): Promise<void> } | null,
  ) {}

  /**
   * Starts the app on a fresh database, or on `shared.database` of another TestApp: two apps on one
   * database behave like two processes of the service.
   */
  static async start(overrides: Partial<Config> = {}, shared?: StartOptions): Promise<TestApp> {
    const database = shared?.database ?? (await freshDatabase());
    const eventStore = await eventStoreFor(database, !shared?.database);
    // The specs assert the leads list's totals, not how fast they are counted: a loaded machine
    // must not turn an exact count into an estimate (LEADS_EXACT_COUNT_MS).
    const config = { ...loadConfig({}), adminToken, port: 0, leadsExactCountMs: 60_000, ...eventStore, ...overrides };
    const pool = createPool(database.url, 20, config.queryTimeoutMs);
    const services = createServiceParts(config, pool, shared?.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'), new Metrics(false));
    const app = createApp(services);
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const { port } = server.address() as AddressInfo;
    if (shared?.erasureRunner !== false) services.erasures.start();
    let workers = null;
    if (shared?.projections) {
      const started = startProjectionWorker({
        databaseUrl: database.url,
        queryTimeoutMs: config.queryTimeoutMs,
        store: services.store,
        log: services.log,
        metrics: services.metrics,
        pollMs: 20,
        batchSize: config.projectionBatchSize,
      });
      services.appends.on('appended', (accountIds) => started.worker.wake(accountIds));
      workers = started;
    }
    return new TestApp(`http://127.0.0.1:${port}`, services, pool, database, server, !shared?.database, workers);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    await this.services.erasures.stop();
    await this.workers?.stop();
    await this.services.store.close();
    await this.services.activity.close();
    await this.pool.end();
    if (this.ownsDatabase) {
      await esdbServers.get(this.database.name)?.close();
      esdbServers.delete(this.database.name);
      await this.database.drop();
    }
  }

  /** The EventStoreDB test double this app keeps its events in; null on Postgres. */
  esdbDouble(): EsdbTestServer | null {
    return esdbServers.get(this.database.name) ?? null;
  }

  /** Resolves once every projection has applied every stored event (read models are up to date); checked every 10 ms, as many tests wait on it. */
  async projected(timeoutMs = 10_000): Promise<void> {
    let lags: Awaited<ReturnType<typeof accountBacklogs>> = [];
    const behind = (): number => lags.reduce((sum, lag) => sum + lag.lagEvents, 0);
    await until(
      async () => {
        lags = await accountBacklogs(this.pool, this.services.store);
        return behind() === 0;
      },
      timeoutMs,
      () => `projections still ${behind()} events behind: ${JSON.stringify(lags)}`,
      10,
    );
  }

  /** GET with the given Authorization header (default: none). */
  get<T = unknown>(path: string, authorization?: string): Promise<Reply<T>> {
    return this.request<T>('GET', path, undefined, authorization === undefined ? {} : { authorization });
  }

  async account(name = 'acme'): Promise<Credentials> {
    const { licenseCode, accessToken } = await createAccount(this.pool, name);
    return { licenseCode, accessToken };
  }

  async request<T = unknown>(method: string, path: string, body?: unknown, options: PostOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.authorization) headers.authorization = options.authorization;
    if (body !== undefined || options.raw !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: options.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: left as text for the assertion to show
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

  /** POST to an ingest endpoint of `account` (`users`, `users/bulk`, `events`, ...). */
  ingest<T = IngestReply>(account: Credentials, endpoint: string, body: unknown, options: PostOptions = {}): Promise<Reply<T>> {
    const authorization = options.authorization === undefined ? `Bearer ${account.accessToken}` : options.authorization;
    return this.request<T>('POST', `/v1/accounts/${account.licenseCode}/${endpoint}`, body, { ...options, authorization });
  }

  /**
   * Every stored event, in the store's order: from the events table, or through the port on
   * EventStoreDB (the catch-up read of Postgres would hold back events behind a running transaction).
   * On EventStoreDB the catch-up read may answer an empty page before its subscription has delivered
   * what is stored, so the count comes first from a direct read of `$all` (backlog counts the
   * service's event types, the types the catch-up read is filtered to) and pages are read until
   * they hold that many. Either way the events come opened (personal fields as sent), as the
   * service reads them; `sealedEvents` gives them as stored.
   */
  /** The rows of the Postgres store's events table, as stored: personal fields sealed. */
  async sealedEvents(): Promise<StoredEvent[]> {
    const { rows } = await this.pool.query<StoredEvent>(
      `SELECT global_position, stream_name, stream_position, event_id, event_type, data, metadata
       FROM events ORDER BY global_position`,
    );
    return rows;
  }

  async events(): Promise<StoredEvent[]> {
    if (!this.services.config.eventStoreUrl) {
      const rows = await this.sealedEvents();
      const opened = await openEvents(
        new PersonKeys(this.pool),
        rows.map((row) => ({
          id: row.event_id,
          stream: row.stream_name,
          streamPosition: row.stream_position,
          globalPosition: row.global_position,
          recordedAt: '',
          ...fromStored({ type: row.event_type, data: row.data, metadata: row.metadata }),
        })),
      );
      return rows.map((row, i) => ({ ...row, data: (opened.events[i] as RecordedEvent).data }));
    }
    const stored = await this.services.store.backlog(null);
    if (stored.atLeast) throw new Error(`more than ${stored.events} events stored: too many to read for a test`);
    const events: StoredEvent[] = [];
    let checkpoint: string | null = null;
    while (events.length < stored.events) {
      const page = await this.services.store.readAll(checkpoint, 1_000);
      checkpoint = page.checkpoint;
      for (const e of page.events) {
        events.push({
          global_position: e.globalPosition,
          stream_name: e.stream,
          stream_position: e.streamPosition,
          event_id: e.id,
          event_type: e.type,
          data: e.data,
          metadata: e.metadata,
        });
      }
    }
    return events;
  }
}

/**
 * Starts a TestApp with one account before each test (or, with `scope: 'suite'`, once for the
 * describe block) and stops it afterwards; `use` receives both, e.g.
 * `servedApp((started) => ({ app, account } = started))`.
 */
export function servedApp(
  use: (started: { app: TestApp; account: Credentials }) => void,
  { scope = 'test', config = {}, projections = false }: { scope?: 'test' | 'suite'; config?: Partial<Config>; projections?: boolean } = {},
): void {
  let app: TestApp | undefined;
  (scope === 'test' ? beforeEach : before)(async () => {
    app = await TestApp.start(config, { projections });
    use({ app, account: await app.account() });
  });
  (scope === 'test' ? afterEach : after)(async () => {
    await app?.stop();
  });
}

export interface StoredEvent {
  global_position: number;
  stream_name: string;
  stream_position: number;
  event_id: string;
  event_type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

export type IngestReply = {
  response?: { status: string; trackID?: string; message?: string } | { status: string; trackID?: string; message?: string }[];
  error?: string;
  code?: number;
};

export interface SingleReply {
  response: { status: string; trackID?: string; message?: string };
}

export interface BulkReply {
  response: { status: string; trackID?: string; message?: string }[];
}
