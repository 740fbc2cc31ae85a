import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Settings of `npm run bench`, from the environment (README, docs/performance.md). */

/** The repository: scripts are started from dist/ under it. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got '${raw}'`);
  return value;
}

export const scenarioGroups = ['ceilings', 'ingest', 'import', 'apply', 'rebuild', 'visibility', 'freshness', 'workers', 'leads', 'sdk', 'hostile', 'sealing', 'erasure', 'browser', 'segment', 'export', 'backlog'] as const;
export type ScenarioGroup = (typeof scenarioGroups)[number];

function isGroup(name: string): name is ScenarioGroup {
  return (scenarioGroups as readonly string[]).includes(name);
}

function selectedGroups(): Set<ScenarioGroup> {
  const raw = process.env.BENCH_SCENARIOS;
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'all') return new Set(scenarioGroups);
  const names = raw.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.filter((n) => !isGroup(n));
  if (unknown.length) throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')}; choose from ${scenarioGroups.join(', ')}`);
  return new Set(names.filter(isGroup));
}

export const selected = selectedGroups();

/**
 * BENCH_DATABASE_URL: an external PostgreSQL server (a user allowed to create databases); the
 * ingest group also runs on a fresh database of it, dropped after (servers.ts).
 */
export const benchDatabaseUrl = process.env.BENCH_DATABASE_URL || null;

export const settings = {
  scenarios: [...selected].join(','),
  connections: intEnv('BENCH_CONNECTIONS', 64, 1),
  durationSeconds: intEnv('BENCH_DURATION', 10, 1),
  // Not measured: lets the JIT and the caches (accounts, attribute types) settle first.
  warmupSeconds: intEnv('BENCH_WARMUP', 2, 0),
  bulkSize: 100,
  // Each write ceiling measure (one kind of row, one method) lasts this long.
  ceilingSeconds: intEnv('BENCH_CEILING_SECONDS', 5, 1),
  ceilingRowsPerStatement: 1_000,
  importProfiles: intEnv('BENCH_IMPORT_PROFILES', 50_000, 100),
  applyEvents: intEnv('BENCH_APPLY_EVENTS', 250_000, 1_000),
  rebuildEvents: intEnv('BENCH_REBUILD_EVENTS', 1_000_000, 1_000),
  leads: intEnv('BENCH_LEADS', 1_000_000, 10_000),
  leadsRequests: intEnv('BENCH_LEADS_REQUESTS', 20, 1),
  sdkEvents: intEnv('BENCH_SDK_EVENTS', 30_000, 1_000),
  // The target: POST to visible p99 < 250 ms at 500 req/s.
  visibilityRate: intEnv('BENCH_VISIBILITY_RATE', 500, 2),
  visibilitySeconds: intEnv('BENCH_VISIBILITY_SECONDS', 20, 1),
  // Freshness: profiles one account imports (bulk of bulkSize, the API's most) while another's probe posts.
  freshnessProfiles: intEnv('BENCH_FRESHNESS_PROFILES', 100_000, 100),
  freshnessConnections: intEnv('BENCH_FRESHNESS_CONNECTIONS', 8, 1),
  // Freshness of an idle service: probes posted one at a time, 200-600 ms apart, before the rest (0: none).
  idleProbes: intEnv('BENCH_IDLE_PROBES', 200, 0),
  // Workers: the store the catch-ups of one and two worker processes apply, its accounts, and how
  // many times the pair (one, then two) runs.
  workersEvents: intEnv('BENCH_WORKERS_EVENTS', 250_000, 1_000),
  workersAccounts: intEnv('BENCH_WORKERS_ACCOUNTS', 64, 2),
  workersRounds: intEnv('BENCH_WORKERS_ROUNDS', 2, 1),
  // Sealing: rounds of the three scenarios with SEALING on and off, each pair in turn (sealing.ts).
  sealingRounds: intEnv('BENCH_SEALING_ROUNDS', 3, 1),
  // Browser keys: rounds of a browser key's requests and an access token's, in turn (browser.ts).
  browserRounds: intEnv('BENCH_BROWSER_ROUNDS', 3, 1),
  // Segment's /v1/batch against events/bulk and users/bulk: after a warm-up pass (BENCH_WARMUP per
  // scenario), rounds of the five scenarios, the order flipped every round, each measured for
  // BENCH_SEGMENT_SECONDS after a second's warm-up (segment.ts).
  segmentRounds: intEnv('BENCH_SEGMENT_ROUNDS', 2, 1),
  segmentSeconds: intEnv('BENCH_SEGMENT_SECONDS', 6, 1),
  // Erasure: the erased person's events (posted in bulk of bulkSize), the bystander account's
  // connections and its window of ingest before the erasure (erasure.ts).
  erasureEvents: intEnv('BENCH_ERASURE_EVENTS', 10_000, 100),
  erasureConnections: intEnv('BENCH_ERASURE_CONNECTIONS', 16, 1),
  erasureBeforeSeconds: intEnv('BENCH_ERASURE_BEFORE', 8, 1),
  // Export: the events of the exported account (posted in bulk of bulkSize), and the rounds of the
  // export and its two ceilings, in a turned order each round (export.ts).
  exportEvents: intEnv('BENCH_EXPORT_EVENTS', 1_000_000, 1_000),
  exportRounds: intEnv('BENCH_EXPORT_ROUNDS', 3, 1),
  // Backlog: the large events (about BENCH_BACKLOG_EVENT_BYTES of sealed fields each) one account
  // posts with PROJECTIONS=off before the restart that drains them (backlog.ts).
  backlogEvents: intEnv('BENCH_BACKLOG_EVENTS', 12_000, 100),
  backlogEventBytes: intEnv('BENCH_BACKLOG_EVENT_BYTES', 8_000, 500),
  // Longest wait for the projections to catch up after an ingest scenario.
  drainLimitSeconds: intEnv('BENCH_DRAIN_LIMIT', 60, 0),
  // Past it, a catch-up, rebuild or import is stopped and its rate so far reported.
  projectionLimitSeconds: intEnv('BENCH_PROJECTION_LIMIT', 120, 5),
  // PROJECTION_BATCH_SIZE of the catch-up worker and the rebuild (0: the service's default); the
  // ingest and visibility services always run with the defaults, as npm start does.
  projectionBatchSize: intEnv('BENCH_PROJECTION_BATCH_SIZE', 0, 0),
  rateLimits: 'off (PRODUCTSEVENTS_RATE_LIMIT=0, INGEST_RATE_LIMIT=0): the bench measures ingest, not the limiter',
  // Ingest on the embedded and an external PostgreSQL (servers.ts): the rounds, and the connections of their single scenarios.
  serverRounds: intEnv('BENCH_SERVER_ROUNDS', 2, 1),
  serverConnections: intEnv('BENCH_SERVER_CONNECTIONS', 50, 1),
  externalServer: externalServerName(),
};

/** The external server's address as printed: its credentials left out. */
function externalServerName(): string {
  if (!benchDatabaseUrl) return 'none (BENCH_DATABASE_URL unset)';
  const url = new URL(benchDatabaseUrl);
  return `${url.hostname}:${url.port || '5432'}`;
}

export type Settings = typeof settings;

export const say = (line: string): void => void process.stderr.write(`${line}\n`);
