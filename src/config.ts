import { resolve } from 'node:path';

/** Every access token starts with it (src/accounts/tokens.ts); the admin token may not. */
export const accessTokenPrefix = 'trk_';
/** Browser keys (docs/browser.md) start with this. */
export const browserKeyPrefix = 'tbk_';

/**
 * Bytes one write may hold by default: EventStoreDB's default `MaxAppendSize` (1 MiB). Servers up
 * to v25.0 refuse a bigger write whole (KurrentDB Streams.BatchAppend.cs, Streams.Append.cs).
 */
export const defaultMaxAppendBytes = 1024 * 1024;

export interface Config {
  /** Postgres for read models, registries and the event store; unset means the embedded server. */
  databaseUrl: string | undefined;
  /** Where the embedded server keeps its data. */
  dataDir: string;
  /** An EventStoreDB connection string: the events are kept there instead of in Postgres. */
  eventStoreUrl: string | undefined;
  /** Bytes one write to EventStoreDB may hold (ESDB_MAX_APPEND_BYTES, the server's MaxAppendSize). */
  esdbMaxAppendBytes: number;
  port: number;
  /** Listen address (HOST); unset: every interface. */
  host: string | undefined;
  /** `npm run worker`: port of its /livez, /readyz and /metrics (WORKER_PORT, formerly METRICS_PORT); null: none. */
  workerPort: number | null;
  /** A request whose headers and body have not all arrived within this many seconds gets 408. */
  requestTimeoutSeconds: number;
  /** Heap bytes the ingest request bodies of a process may take at once (src/http/body-budget.ts); past them requests get 503 (0: no limit). */
  inflightBodyBytes: number;
  /** Bulk requests of one account read, checked and stored at once while other accounts send too (src/http/account-admission.ts); the others wait their turn (0: no limit). */
  bulkPerAccount: number;
  /** An ingest body bringing less than this many bytes per second in any 5 s from its start gets 408 (0: no minimum). */
  minBodyBytesPerSecond: number;
  adminToken: string | undefined;
  /** METRICS_TOKEN: when set, /metrics needs `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open. */
  metricsToken: string | undefined;
  /** Express's `trust proxy` (TRUST_PROXY): whose X-Forwarded-For/-Proto to believe; unset: nobody's. */
  trustProxy: string | number | undefined;
  /** Requests per minute per account on productsevents, shared by every process. */
  productEventsPerMinute: number;
  /** Requests per minute per account on each other ingest endpoint, per process. */
  otherEndpointsPerMinute: number;
  /** Requests per minute of one browser key from one client address (IPv6: its /64), per process; 0: no limit. */
  browserAddressPerMinute: number;
  /** Requests per minute of one browser key from all addresses, shared by every process; 0: no limit. */
  browserKeyPerMinute: number;
  /** A database query unanswered for this long fails, and the request gets 503. */
  queryTimeoutMs: number;
  /** How long the leads list counts its total exactly before PostgreSQL's estimate answers instead (LEADS_EXACT_COUNT_MS). */
  leadsExactCountMs: number;
  logLevel: string;
  /** Whether `npm start` also runs the projection workers (PROJECTIONS=off: API only). */
  runProjections: boolean;
  /**
   * Whether new events are stored with their personal fields sealed (docs/decisions.md, Erasure).
   * SEALING=off exists to measure what sealing costs (`npm run bench`): events stored while it is
   * off cannot be erased.
   */
  sealing: boolean;
  /** Events a projection reads and applies per transaction; unset: the worker's default (projections/runner/worker.ts, or less in `npm start`'s thread). */
  projectionBatchSize: number | undefined;
  /** How long a caught-up projection worker waits before looking for events from other processes. */
  projectionPollMs: number;
  /** How long a projection worker's claim on a part lasts unless renewed: a dead worker's parts go to the others after it. */
  projectionLeaseMs: number;
  /** Batches a projection worker applies at once (one database connection each). */
  projectionLanes: number;
}

/**
 * The minimum data rate of a request body, bytes per second, over each 5 s from its start (the
 * figure common servers use): a client that trickles a body ties a connection for nothing.
 */
export const defaultMinBodyBytesPerSecond = 240;

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return value;
}

/**
 * TRUST_PROXY: a number of proxy hops, or addresses and subnets (`loopback`, `10.0.0.0/8`, comma
 * separated) whose forwarding headers are believed. `true` (believe anyone) is refused: any client
 * could then claim to be HTTPS or another address.
 */
function trustProxySetting(raw: string | undefined): string | number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  if (/^(true|false)$/i.test(raw.trim())) throw new Error(`TRUST_PROXY must be a number of hops or the proxies' addresses, got '${raw}'`);
  return raw.trim();
}

/**
 * ADMIN_TOKEN: any text, except one starting as access tokens or browser keys do: a token starting
 * with `trk_` or `tbk_` is taken for one, and guesses of one are not counted (src/http/sign-in-limit.ts).
 */
function adminTokenSetting(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (raw.startsWith(accessTokenPrefix)) throw new Error(`ADMIN_TOKEN must not start with '${accessTokenPrefix}', the prefix of access tokens`);
  if (raw.startsWith(browserKeyPrefix)) throw new Error(`ADMIN_TOKEN must not start with '${browserKeyPrefix}', the prefix of browser keys`);
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    eventStoreUrl: env.EVENTSTORE_URL || undefined,
    esdbMaxAppendBytes: Math.max(1, intSetting(env, 'ESDB_MAX_APPEND_BYTES', defaultMaxAppendBytes)),
    port: intSetting(env, 'PORT', 3000),
    host: env.HOST || undefined,
    workerPort: env.WORKER_PORT || env.METRICS_PORT ? intSetting(env, env.WORKER_PORT ? 'WORKER_PORT' : 'METRICS_PORT', 0) : null,
    requestTimeoutSeconds: Math.max(1, intSetting(env, 'REQUEST_TIMEOUT_SECONDS', 30)),
    inflightBodyBytes: intSetting(env, 'INFLIGHT_BODY_BYTES', 128 * 1024 * 1024),
    bulkPerAccount: intSetting(env, 'ACCOUNT_BULK_CONCURRENCY', 1),
    minBodyBytesPerSecond: intSetting(env, 'MIN_BODY_RATE', defaultMinBodyBytesPerSecond),
    adminToken: adminTokenSetting(env.ADMIN_TOKEN),
    metricsToken: env.METRICS_TOKEN || undefined,
    trustProxy: trustProxySetting(env.TRUST_PROXY),
    productEventsPerMinute: intSetting(env, 'PRODUCTSEVENTS_RATE_LIMIT', 10_000),
    otherEndpointsPerMinute: intSetting(env, 'INGEST_RATE_LIMIT', 600_000),
    browserAddressPerMinute: intSetting(env, 'BROWSER_ADDRESS_RATE_LIMIT', 600),
    browserKeyPerMinute: intSetting(env, 'BROWSER_KEY_RATE_LIMIT', 6_000),
    queryTimeoutMs: intSetting(env, 'QUERY_TIMEOUT_MS', 10_000),
    leadsExactCountMs: Math.max(1, intSetting(env, 'LEADS_EXACT_COUNT_MS', 50)),
    logLevel: env.LOG_LEVEL || 'info',
    runProjections: !/^(off|false|0|no)$/i.test(env.PROJECTIONS ?? ''),
    sealing: !/^(off|false|0|no)$/i.test(env.SEALING ?? ''),
    projectionBatchSize: env.PROJECTION_BATCH_SIZE ? Math.max(1, intSetting(env, 'PROJECTION_BATCH_SIZE', 1)) : undefined,
    projectionPollMs: Math.max(1, intSetting(env, 'PROJECTION_POLL_MS', 100)),
    projectionLeaseMs: Math.max(1_000, intSetting(env, 'PROJECTION_LEASE_MS', 6_000)),
    projectionLanes: Math.max(1, intSetting(env, 'PROJECTION_LANES', 4)),
  };
}
