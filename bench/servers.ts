import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../src/net.js';
import { allQueued, bulkBodies, queued, userBody } from './bodies.js';
import { WriteCeilingMeter } from './ceilings.js';
import { startChild, stopChild, waitHealthy, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { measure, type Scenario, type Target } from './load.js';
import { storeUrl } from './projections.js';
import type { Row } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, stopService, type RunningService } from './service.js';
import { benchDatabaseUrl, root, say, settings } from './settings.js';

/*
 * The same ingest on the embedded PostgreSQL and on an external server (BENCH_DATABASE_URL, a fresh
 * database made for the run and dropped after), the service with PROJECTIONS=off on each, both
 * running throughout. Per round, per server: users single over 1,000 users and for one user (every
 * request to one stream), each right after the naive peer on the same server with the same bodies
 * (BENCH_SERVER_CONNECTIONS connections); then, once, the users write ceiling of that server and
 * users bulk. Each server's durability settings and the cost of a commit on it (one connection
 * committing single-row INSERTs, and 20 at once: how far its WAL flushes group) explain the
 * difference between them.
 */

const json = { 'content-type': 'application/json' };
const commitProbeSeconds = 3;

/** A server the bench writes to: its connection string and, where it runs on this machine, its postmaster. */
interface StoreServer {
  name: 'embedded' | 'external';
  url: string;
  pgPid: number | null;
}

export interface CommitCost {
  connections: number;
  commitsPerSec: number;
  meanMs: number;
}

export interface ServerResult {
  server: 'embedded' | 'external';
  settings: string;
  commits: CommitCost[];
  /** In measure order: each service row right after its peer row. */
  rows: Row[];
}

/**
 * A reference server of the bench (its script in dist/bench), started for one scenario: `scenarioAt`
 * gives the scenario and its target on the server's URL once it answers /healthz; stopped after.
 */
export async function measureServer(
  children: Child[],
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  scenarioAt: (url: string, child: Child) => Promise<[Scenario, Target]>,
): Promise<Row> {
  const port = await freePort();
  const child = startChild(name, join(root, 'dist', 'bench', script), { ...process.env, ...env, PORT: String(port) }, root);
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitHealthy(child, `${url}/healthz`, 30_000);
    return await measure(...(await scenarioAt(url, child)));
  } finally {
    say(`${name} stopped (SIGTERM): ${await stopChild(child, 30_000)}`);
  }
}

/**
 * The naive peer (naive-peer-server.ts), measured like the service's single-item scenario of the
 * same kind, on the service's PostgreSQL: the simple thing a user would write instead.
 */
export async function measureNaivePeer(children: Child[], server: { url: string; pgPid: number | null }, service: Scenario): Promise<Row> {
  const kind = service.path.slice(service.path.lastIndexOf('/') + 1);
  return measureServer(children, 'naive peer', 'naive-peer-server.js', { DATABASE_URL: server.url }, async (url, child) => [
    { ...service, name: `naive peer ${service.name}`, config: 'naive peer', path: `/v1/accounts/peer/${kind}` },
    { url, headers: json, child, worker: null, pgPid: server.pgPid, store: null, peer: true },
  ]);
}

/** The postmaster of a server on this machine (the parent of its checkpointer), or null. */
async function localPostmaster(db: pg.Client): Promise<number | null> {
  const { rows } = await db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'");
  const pid = rows[0]?.pid;
  if (pid === undefined) return null;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  // The fields after the command's closing parenthesis: state, then the parent's pid.
  const parent = stat === null ? NaN : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isInteger(parent) && parent > 1 ? parent : null;
}

async function serverSettings(db: pg.Client): Promise<string> {
  const names = ['server_version', 'fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay', 'shared_buffers', 'wal_buffers', 'max_wal_size', 'io_method'];
  const { rows } = await db.query<{ name: string; setting: string; unit: string | null }>('SELECT name, setting, unit FROM pg_settings WHERE name = ANY($1) ORDER BY name', [names]);
  return rows.map((r) => `${r.name}=${r.setting}${r.unit && r.unit !== 'MB' && r.unit !== 's' ? `x${r.unit}` : (r.unit ?? '')}`).join(', ');
}

/** Single-row INSERTs, each its own durable commit, from `connections` at once for a few seconds. */
async function commitCost(url: string, connections: number): Promise<CommitCost> {
  const clients = Array.from({ length: connections }, () => new pg.Client({ connectionString: url }));
  const table = 'bench_commit_probe';
  try {
    for (const client of clients) await client.connect();
    await clients[0]?.query(`CREATE TABLE IF NOT EXISTS ${table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)`);
    let commits = 0;
    const started = performance.now();
    const deadline = started + commitProbeSeconds * 1000;
    await Promise.all(
      clients.map(async (client) => {
        while (performance.now() < deadline) {
          await client.query(`INSERT INTO ${table} (v) VALUES ($1)`, ['x'.repeat(400)]);
          commits += 1;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    await clients[0]?.query(`DROP TABLE ${table}`);
    return { connections, commitsPerSec: commits / seconds, meanMs: (seconds * 1000 * connections) / commits };
  } finally {
    for (const client of clients) await client.end().catch(() => undefined);
  }
}

/** A fresh database on the server of BENCH_DATABASE_URL; `drop` removes it with whatever is connected. */
async function freshDatabase(serverUrl: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `tracking_bench_${Date.now().toString(36)}_${process.pid}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const again = new pg.Client({ connectionString: serverUrl });
      await again.connect();
      try {
        await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}

interface Running {
  server: StoreServer;
  service: RunningService;
  result: ServerResult;
  target: Target;
  license: string;
}

function singles(license: string, config: string): Scenario[] {
  const path = `/v1/accounts/${license}/users`;
  const connections = settings.serverConnections;
  return [
    { name: 'users single, 1,000 users', config, path, items: 1, bulkKind: null, body: (n) => userBody(n % 1_000), verify: queued, connections },
    { name: 'users single, one user', config, path, items: 1, bulkKind: null, body: () => userBody(0), verify: queued, connections },
  ];
}

async function open(server: StoreServer, service: RunningService, adminToken: string): Promise<Running> {
  const db = new pg.Client({ connectionString: server.url });
  await db.connect();
  try {
    server.pgPid ??= await localPostmaster(db);
    const result: ServerResult = { server: server.name, settings: await serverSettings(db), commits: [], rows: [] };
    const account = await createAccount(service.url, adminToken, `servers ${server.name}`);
    const target: Target = { url: service.url, headers: { ...json, authorization: `Bearer ${account.accessToken}` }, child: service.child, worker: null, pgPid: server.pgPid, store: null };
    return { server, service, result, target, license: account.licenseCode };
  } finally {
    await db.end();
  }
}

/** Users bulk after the users write ceiling of the same server, measured right before it. */
async function bulkAgainstCeiling(running: Running, adminToken: string): Promise<void> {
  const { server, service, target, license, result } = running;
  const meter = await WriteCeilingMeter.open({
    storeUrl: server.url,
    serviceUrl: service.url,
    account: await createAccount(service.url, adminToken, `servers ${server.name} ceiling`),
    pgPid: server.pgPid,
    seconds: settings.ceilingSeconds,
    rowsPerStatement: settings.ceilingRowsPerStatement,
  });
  try {
    await meter.measure('users');
  } finally {
    await meter.close();
  }
  const ceiling = Math.max(...meter.rows.map((r) => r.rowsPerSec));
  const config = `PROJECTIONS=off, ${server.name}`;
  const bulk: Scenario = { name: `users bulk x${settings.bulkSize}`, config, path: `/v1/accounts/${license}/users/bulk`, items: settings.bulkSize, bulkKind: 'users', body: bulkBodies('users', settings.bulkSize), verify: allQueued };
  const row = await measure(bulk, target);
  row.ceiling = { ceiling: 'write: users rows', ceilingPerSec: ceiling, ratio: row.itemsPerSec / ceiling };
  result.rows.push(row);
}

/** The embedded server of `dataDir`, and the external one of BENCH_DATABASE_URL when set: see the header. */
export async function compareServers(dataDir: string, adminToken: string, children: Child[]): Promise<ServerResult[]> {
  setPhase('ingest: embedded and external PostgreSQL');
  const runnings: Running[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const embedded = await startService('service (PROJECTIONS=off, embedded)', dataDir, adminToken, children, { projections: false });
    cleanups.push(() => stopService(embedded));
    runnings.push(await open({ name: 'embedded', url: await storeUrl(dataDir), pgPid: await postmasterPid(dataDir) }, embedded, adminToken));
    if (benchDatabaseUrl) {
      const database = await freshDatabase(benchDatabaseUrl);
      cleanups.unshift(database.drop);
      const ownDir = await mkdtemp(join(tmpdir(), 'tracking-bench-external-'));
      cleanups.push(() => rm(ownDir, { recursive: true, force: true }));
      const external = await startService('service (PROJECTIONS=off, external)', ownDir, adminToken, children, { projections: false, env: { DATABASE_URL: database.url } });
      cleanups.unshift(() => stopService(external));
      runnings.push(await open({ name: 'external', url: database.url, pgPid: null }, external, adminToken));
    }
    for (const running of runnings) {
      for (const connections of [1, 20]) running.result.commits.push(await commitCost(running.server.url, connections));
    }
    for (let round = 0; round < settings.serverRounds; round += 1) {
      for (const running of runnings) {
        for (const scenario of singles(running.license, `PROJECTIONS=off, ${running.server.name}`)) {
          running.result.rows.push(await measureNaivePeer(children, running.server, scenario));
          running.result.rows.push(await measure(scenario, running.target));
        }
      }
    }
    for (const running of runnings) await bulkAgainstCeiling(running, adminToken);
    return runnings.map((r) => r.result);
  } finally {
    for (const cleanup of cleanups) await cleanup().catch((error: unknown) => say(`servers: cleanup failed: ${String(error)}`));
  }
}
