import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { projections } from '../projections/index.js';
import { allQueued, bulkBodies, eventBody, productEventBody, queued, userBody } from './bodies.js';
import { freePort } from '../src/net.js';
import { interrupted, startChild, stopChild, waitHealthy, type Child } from './children.js';
import { machineBusySeconds, ownCpuSeconds, postmasterPid, treeCpuSeconds } from './cpu.js';
import { fill, measureCatchUp, measureReadOnly, measureRebuild, storeHead, storeUrl } from './projections.js';
import { printTable, type ProjectionRow, type Row, type VisibilityRow } from './report.js';
import { measureVisibility } from './visibility.js';
import { measureLeads, printLeads, type LeadsRow } from './leads.js';
import { measureSdkMemory, measureSdkThroughput, printSdk, type SdkMemory, type SdkRow } from './sdk.js';

/*
 * `npm run bench`: the service (embedded PostgreSQL, fresh data directory) and an Express
 * hello-world baseline as child processes, loaded one scenario after another with autocannon.
 * Then, on a second fresh data directory: the projections applying a store filled in SQL (a worker
 * process from an empty checkpoint), a full rebuild of all four on a larger store, and how soon a
 * posted user is served by the read API under steady ingest.
 * Then, on a third: the leads list and search on an account of a million leads (bench/leads.ts).
 * Then, on a fourth: the SDK's throughput against direct bulk posts, and the memory of a client
 * holding a full queue (bench/sdk.ts).
 * Settings: BENCH_SCENARIOS (comma-separated, default all: ingest, apply, rebuild, visibility,
 * leads, sdk; the hello-world baseline always runs), BENCH_SDK_EVENTS (30000), BENCH_LEADS (1000000), BENCH_LEADS_REQUESTS (20), BENCH_CONNECTIONS (64), BENCH_DURATION seconds (10),
 * BENCH_WARMUP seconds (2), BENCH_APPLY_EVENTS (250000), BENCH_REBUILD_EVENTS (1000000),
 * BENCH_VISIBILITY_RATE req/s (1000), BENCH_VISIBILITY_SECONDS (20), BENCH_DRAIN_LIMIT seconds (60:
 * the longest wait, after each ingest scenario and warm-up, for the service's projection workers to
 * apply what it stored, so that no scenario pays for the previous one's backlog), BENCH_PROJECTION_LIMIT
 * seconds (120: a catch-up or rebuild still running then is stopped, its rate so far reported),
 * BENCH_PROJECTION_BATCH_SIZE (the catch-up worker's and the rebuild's PROJECTION_BATCH_SIZE; unset:
 * the default),
 * BENCH_JSON (a path: also write the results there). Exits 1 if any response was not a success,
 * a lead never showed or the read models disagree with the store after a projection scenario.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got '${raw}'`);
  return value;
}

const allScenarios = ['ingest', 'apply', 'rebuild', 'visibility', 'leads', 'sdk'] as const;
type ScenarioGroup = (typeof allScenarios)[number];

function selectedScenarios(): Set<ScenarioGroup> {
  const raw = process.env.BENCH_SCENARIOS;
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'all') return new Set(allScenarios);
  const names = raw.split(',').map((n) => n.trim()).filter((n) => n !== '');
  const unknown = names.filter((n) => !(allScenarios as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')}; choose from ${allScenarios.join(', ')}`);
  return new Set(names as ScenarioGroup[]);
}

const selected = selectedScenarios();

const settings = {
  scenarios: [...selected].join(','),
  connections: intEnv('BENCH_CONNECTIONS', 64, 1),
  durationSeconds: intEnv('BENCH_DURATION', 10, 1),
  // Not measured: lets the JIT and the caches (accounts, attribute types) settle first.
  warmupSeconds: intEnv('BENCH_WARMUP', 2, 0),
  bulkSize: 100,
  applyEvents: intEnv('BENCH_APPLY_EVENTS', 250_000, 1_000),
  rebuildEvents: intEnv('BENCH_REBUILD_EVENTS', 1_000_000, 1_000),
  leads: intEnv('BENCH_LEADS', 1_000_000, 10_000),
  leadsRequests: intEnv('BENCH_LEADS_REQUESTS', 20, 1),
  sdkEvents: intEnv('BENCH_SDK_EVENTS', 30_000, 1_000),
  visibilityRate: intEnv('BENCH_VISIBILITY_RATE', 1_000, 2),
  visibilitySeconds: intEnv('BENCH_VISIBILITY_SECONDS', 20, 1),
  // Longest wait for the service's projections to catch up after an ingest scenario.
  drainLimitSeconds: intEnv('BENCH_DRAIN_LIMIT', 60, 0),
  // Past it, a catch-up or rebuild is stopped and its rate so far reported (against the 60 s target).
  projectionLimitSeconds: intEnv('BENCH_PROJECTION_LIMIT', 120, 5),
  // PROJECTION_BATCH_SIZE of the catch-up worker and the rebuild (0: the service's default); the
  // ingest and visibility services always run with the defaults, as npm start does.
  projectionBatchSize: intEnv('BENCH_PROJECTION_BATCH_SIZE', 0, 0),
  rateLimits: 'off (PRODUCTSEVENTS_RATE_LIMIT=0, INGEST_RATE_LIMIT=0): the bench measures ingest, not the limiter',
};

interface Scenario {
  name: string;
  target: 'baseline' | 'service';
  path: string;
  items: number;
  body: (n: number) => string;
  verify: (reply: string) => boolean;
}

interface Target {
  url: string;
  headers: Record<string, string>;
  child: Child;
}

function load(target: Target, scenario: Scenario, seconds: number, counter: { n: number }): Promise<autocannon.Result> {
  return new Promise((resolvePromise, reject) => {
    const instance = autocannon(
      {
        url: target.url + scenario.path,
        connections: settings.connections,
        duration: seconds,
        method: 'POST',
        headers: target.headers,
        // One dynamic request: every request gets a fresh body, so ids (and streams) vary.
        requests: [{ setupRequest: (request) => ({ ...request, body: scenario.body(counter.n++) }) }],
        verifyBody: (reply) => scenario.verify(reply === undefined ? '' : reply.toString()),
      },
      (error: unknown, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolvePromise(result)),
    );
    const stop = (): void => instance.stop();
    interrupted.addEventListener('abort', stop, { once: true });
    instance.once('done', () => interrupted.removeEventListener('abort', stop));
  });
}

/** Group commit counters of the service: how many events each transaction carried. */
async function commitStats(serviceUrl: string): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { sum: value('tracking_eventstore_append_batch_events_sum'), count: value('tracking_eventstore_append_batch_events_count') };
}

async function cpuSnapshot(
  target: Target,
  pgPid: number | null,
): Promise<{ node: number | null; pg: number | null; gen: NodeJS.CpuUsage; machine: number | null }> {
  const pid = target.child.process.pid;
  return {
    node: pid === undefined ? null : await ownCpuSeconds(pid),
    pg: pgPid === null ? null : await treeCpuSeconds(pgPid),
    gen: process.cpuUsage(),
    machine: await machineBusySeconds(),
  };
}

/**
 * Waits until the service's projection workers have applied every stored event (all four
 * checkpoints at the head of the store): the seconds that took, drained false past the limit. The
 * service runs them as `npm start` does, so a scenario would otherwise pay for the backlog the
 * previous one left (after a bulk scenario, tens of seconds of catching up).
 */
async function drain(store: pg.Pool | null, label: string): Promise<{ seconds: number; drained: boolean } | null> {
  if (!store) return null;
  const started = performance.now();
  let lastSaid = started;
  for (;;) {
    interrupted.throwIfAborted();
    // Read again each time: requests still in flight when the load stopped may append after it.
    const head = await storeHead(store);
    const { rows } = await store.query<{ checkpoint: string | null }>('SELECT checkpoint FROM projection_checkpoints');
    const seconds = (performance.now() - started) / 1000;
    if (head === null || (rows.length === projections.length && rows.every((r) => r.checkpoint === head))) return { seconds, drained: true };
    if (seconds > settings.drainLimitSeconds) return { seconds, drained: false };
    if (performance.now() - lastSaid > 5_000) {
      lastSaid = performance.now();
      process.stderr.write(`  projections catching up after ${label} (${seconds.toFixed(0)} s)\n`);
    }
    await sleep(100);
  }
}

async function measure(scenario: Scenario, target: Target, serviceUrl: string, pgPid: number | null, store: pg.Pool | null): Promise<Row> {
  const counter = { n: 0 };
  const serviceStore = scenario.target === 'service' ? store : null;
  if (settings.warmupSeconds > 0) {
    process.stderr.write(`warming up ${scenario.name} (${settings.warmupSeconds} s)\n`);
    await load(target, scenario, settings.warmupSeconds, counter);
    await drain(serviceStore, 'the warm-up');
  }
  interrupted.throwIfAborted();
  process.stderr.write(`measuring ${scenario.name} (${settings.durationSeconds} s)\n`);
  const isService = scenario.target === 'service';
  const noCommits = { sum: 0, count: 0 };
  const commitsBefore = isService ? await commitStats(serviceUrl) : noCommits;
  const cpuBefore = await cpuSnapshot(target, pgPid);
  const started = performance.now();
  const result = await load(target, scenario, settings.durationSeconds, counter);
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuSnapshot(target, pgPid);
  const commitsAfter = isService ? await commitStats(serviceUrl) : noCommits;
  interrupted.throwIfAborted();
  const cores = (before: number | null, after: number | null): number | null =>
    before === null || after === null ? null : (after - before) / seconds;
  const gen = process.cpuUsage(cpuBefore.gen);
  const node = cores(cpuBefore.node, cpuAfter.node);
  const postgres = scenario.target === 'service' ? cores(cpuBefore.pg, cpuAfter.pg) : null;
  const loadgen = (gen.user + gen.system) / 1e6 / seconds;
  const machine = cores(cpuBefore.machine, cpuAfter.machine);
  // The baseline has no PostgreSQL; the service's idle one is then part of the rest.
  const other = machine === null || node === null ? null : Math.max(0, machine - node - (postgres ?? 0) - loadgen);
  const commits = commitsAfter.count - commitsBefore.count;
  const drained = await drain(serviceStore, scenario.name);
  return {
    scenario: scenario.name,
    responses: result.requests.total,
    reqPerSec: result.requests.mean,
    itemsPerSec: result.requests.mean * scenario.items,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    notQueued: result.mismatches,
    errors: result.errors,
    timeouts: result.timeouts,
    vsBaseline: null,
    eventsPerCommit: scenario.target === 'service' && commits > 0 ? (commitsAfter.sum - commitsBefore.sum) / commits : null,
    commitsPerSec: scenario.target === 'service' ? commits / seconds : null,
    cpuCores: { node, postgres, loadgen, other },
    projectionsDrain: drained,
  };
}

async function createAccount(serviceUrl: string, adminToken: string, name = 'Bench'): Promise<{ licenseCode: string; accessToken: string }> {
  const response = await fetch(`${serviceUrl}/admin/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  const body = (await response.json()) as { licenseCode?: unknown; accessToken?: unknown };
  if (response.status !== 201 || typeof body.licenseCode !== 'string' || typeof body.accessToken !== 'string') {
    throw new Error(`account creation answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { licenseCode: body.licenseCode, accessToken: body.accessToken };
}

function scenarios(license: string): Scenario[] {
  const base = `/v1/accounts/${license}`;
  const baseline: Scenario = { name: 'baseline hello-world', target: 'baseline', path: '/hello', items: 1, body: eventBody, verify: (r) => r === '{"ok":true}' };
  if (!selected.has('ingest')) return [baseline];
  return [
    // Same body size as a single event, so the baseline parses as much JSON as the service.
    baseline,
    { name: 'users single', target: 'service', path: `${base}/users`, items: 1, body: userBody, verify: queued },
    { name: `users bulk x${settings.bulkSize}`, target: 'service', path: `${base}/users/bulk`, items: settings.bulkSize, body: bulkBodies(settings.bulkSize), verify: allQueued },
    { name: 'events', target: 'service', path: `${base}/events`, items: 1, body: eventBody, verify: queued },
    { name: 'productsevents', target: 'service', path: `${base}/productsevents`, items: 1, body: productEventBody, verify: queued },
  ];
}

function machine(): Record<string, string | number> {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${process.platform} ${release()}`,
    // Other work on the machine skews every number; a high value here means a noisy run.
    loadAvg1mAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}

/** The service's environment for a data directory: rate limits off, logs at warn. */
function serviceEnv(dataDir: string, port: number, adminToken: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DATABASE_URL;
  // As `npm start` runs it unless a scenario says otherwise (PROJECTIONS=off).
  delete env.PROJECTIONS;
  delete env.PROJECTION_POLL_MS;
  delete env.PROJECTION_BATCH_SIZE;
  return Object.assign(env, {
    DATA_DIR: dataDir,
    PORT: String(port),
    ADMIN_TOKEN: adminToken,
    PRODUCTSEVENTS_RATE_LIMIT: '0',
    INGEST_RATE_LIMIT: '0',
    LOG_LEVEL: 'warn',
    ...extra,
  });
}

const batchSizeEnv = (): Record<string, string> => (settings.projectionBatchSize > 0 ? { PROJECTION_BATCH_SIZE: String(settings.projectionBatchSize) } : {});

interface Projected {
  projections: ProjectionRow[];
  readModelProblems: string[];
  visibility: VisibilityRow | null;
}

/**
 * The projection scenarios, on a data directory of their own. Apply and rebuild run beside the
 * service started with PROJECTIONS=off (it owns the embedded server and the accounts); visibility
 * restarts it as `npm start` runs it, on the store the other two left when its projections are
 * up to date (a store they did not finish would be a rebuild under load), else on a fresh one.
 */
async function projectionScenarios(dataDir: string, spareDir: string, adminToken: string, children: Child[]): Promise<Projected> {
  const result: Projected = { projections: [], readModelProblems: [], visibility: null };
  const port = await freePort();
  const serviceUrl = `http://127.0.0.1:${port}`;
  const say = (line: string): void => void process.stderr.write(`${line}\n`);
  const fillsStore = selected.has('apply') || selected.has('rebuild');
  const name = fillsStore ? 'service (PROJECTIONS=off)' : 'service (npm start)';
  let service = startChild(name, join(root, 'dist', 'src', 'main.js'), serviceEnv(dataDir, port, adminToken, fillsStore ? { PROJECTIONS: 'off' } : {}), root);
  children.push(service);
  say(`starting the service for the projection scenarios (embedded PostgreSQL in ${dataDir})`);
  await waitHealthy(service, `${serviceUrl}/healthz`, 180_000);
  let accounts = [];
  for (let i = 0; i < 4; i += 1) accounts.push(await createAccount(serviceUrl, adminToken, `Bench ${i}`));
  const url = await storeUrl(dataDir);
  const pgPid = await postmasterPid(dataDir);
  // Two connections: the fill uses both (one per half of the accounts); polls and checks use one.
  const db = new pg.Pool({ connectionString: url, max: 2 });
  db.on('error', () => undefined);
  let storeEvents = 0;
  let upToDate = true;
  const limitSeconds = settings.projectionLimitSeconds;
  try {
    const accountIds = (await db.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = ANY($1) ORDER BY name', [accounts.map((a) => a.licenseCode)])).rows.map((r) => r.id);
    // Row r of the mix was received r ms after this: the whole store within the last hour or so.
    const startMs = Date.now() - settings.rebuildEvents - 3_600_000;
    let readRate: number | null = null;
    const readOnly = async (): Promise<void> => {
      say('reading the whole store once (the catch-up read alone)');
      const read = await measureReadOnly(url, storeEvents, 15, settings.projectionBatchSize);
      readRate = read.eventsPerSec;
      result.projections.push(read);
    };
    if (selected.has('apply')) {
      say(`apply: filling the store with ${settings.applyEvents.toLocaleString('en-US')} events`);
      await fill(db, 0, settings.applyEvents, accountIds, startMs);
      storeEvents = settings.applyEvents;
      await readOnly();
      say(`apply: a projection worker process catching up from an empty checkpoint (limit ${limitSeconds} s)`);
      const workerEnv = serviceEnv(dataDir, 0, adminToken, batchSizeEnv());
      const catchUp = await measureCatchUp({ root, env: workerEnv, db, pgPid, readRate, limitSeconds }, children);
      result.projections.push(...catchUp.rows);
      result.readModelProblems.push(...catchUp.problems.map((p) => `catch-up: ${p}`));
      upToDate = catchUp.caughtUp;
    }
    if (selected.has('rebuild')) {
      const target = Math.max(settings.rebuildEvents, storeEvents);
      say(`rebuild: filling the store up to ${target.toLocaleString('en-US')} events`);
      if (target > storeEvents) await fill(db, storeEvents, target, accountIds, startMs);
      storeEvents = target;
      if (!selected.has('apply')) await readOnly();
      say(`rebuild: all four projections replaying ${storeEvents.toLocaleString('en-US')} events at once (limit ${limitSeconds} s)`);
      const rebuild = await measureRebuild({ root, url, db, pgPid, readRate, limitSeconds, env: batchSizeEnv() }, children);
      result.projections.push(...rebuild.rows);
      result.readModelProblems.push(...rebuild.problems.map((p) => `rebuild: ${p}`));
      upToDate = rebuild.finished;
    }
  } finally {
    await db.end();
  }
  if (selected.has('visibility')) {
    if (fillsStore) {
      const outcome = await stopChild(service, 60_000, dataDir);
      say(`service (PROJECTIONS=off) stopped (SIGTERM): ${outcome}`);
      if (!upToDate) {
        say('the projections are behind the store: visibility runs on a fresh data directory');
        dataDir = spareDir;
        storeEvents = 0;
      }
      service = startChild('service (npm start)', join(root, 'dist', 'src', 'main.js'), serviceEnv(dataDir, port, adminToken), root);
      children.push(service);
      say(`starting the service as npm start does (embedded PostgreSQL in ${dataDir})`);
      await waitHealthy(service, `${serviceUrl}/healthz`, 180_000);
      if (!upToDate) accounts = [await createAccount(serviceUrl, adminToken)];
    }
    const account = accounts[0] as { licenseCode: string; accessToken: string };
    result.visibility = await measureVisibility({
      serviceUrl,
      license: account.licenseCode,
      token: account.accessToken,
      child: service,
      pgPid: await postmasterPid(dataDir),
      rate: settings.visibilityRate,
      warmupSeconds: settings.warmupSeconds,
      seconds: settings.visibilitySeconds,
      storeEvents,
    });
  }
  const outcome = await stopChild(service, 60_000, dataDir);
  say(`${service.name} stopped (SIGTERM): ${outcome}`);
  return result;
}

/** The leads scenario, on a data directory of its own, beside the service with PROJECTIONS=off. */
async function leadsScenario(dataDir: string, adminToken: string, children: Child[]): Promise<LeadsRow[]> {
  const port = await freePort();
  const serviceUrl = `http://127.0.0.1:${port}`;
  const service = startChild('service (leads)', join(root, 'dist', 'src', 'main.js'), serviceEnv(dataDir, port, adminToken, { PROJECTIONS: 'off' }), root);
  children.push(service);
  process.stderr.write(`starting the service for the leads scenario (embedded PostgreSQL in ${dataDir})\n`);
  await waitHealthy(service, `${serviceUrl}/healthz`, 180_000);
  const [account, other] = [await createAccount(serviceUrl, adminToken, 'Leads'), await createAccount(serviceUrl, adminToken, 'Other')];
  const db = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 1 });
  db.on('error', () => undefined);
  try {
    const idOf = async (license: string): Promise<string> =>
      (await db.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [license])).rows[0]?.id ?? '';
    const common = { serviceUrl, license: account.licenseCode, token: account.accessToken, leads: settings.leads, requests: settings.leadsRequests, db };
    return await measureLeads({ ...common, accountId: await idOf(account.licenseCode), otherAccountId: await idOf(other.licenseCode) });
  } finally {
    await db.end();
    process.stderr.write(`${service.name} stopped (SIGTERM): ${await stopChild(service, 60_000, dataDir)}\n`);
  }
}

/** The SDK scenario, on a data directory of its own, beside the service with PROJECTIONS=off. */
async function sdkScenario(dataDir: string, adminToken: string, children: Child[]): Promise<{ rows: SdkRow[]; memory: SdkMemory }> {
  const port = await freePort();
  const serviceUrl = `http://127.0.0.1:${port}`;
  const service = startChild('service (sdk)', join(root, 'dist', 'src', 'main.js'), serviceEnv(dataDir, port, adminToken, { PROJECTIONS: 'off' }), root);
  children.push(service);
  process.stderr.write(`starting the service for the sdk scenario (embedded PostgreSQL in ${dataDir})\n`);
  try {
    await waitHealthy(service, `${serviceUrl}/healthz`, 180_000);
    const account = await createAccount(serviceUrl, adminToken, 'SDK');
    const rows = await measureSdkThroughput({ serviceUrl, license: account.licenseCode, token: account.accessToken, events: settings.sdkEvents });
    return { rows, memory: await measureSdkMemory(root) };
  } finally {
    process.stderr.write(`${service.name} stopped (SIGTERM): ${await stopChild(service, 60_000, dataDir)}\n`);
  }
}

async function main(): Promise<void> {
  const info = machine();
  const dataDir = await mkdtemp(join(tmpdir(), 'tracking-bench-'));
  const projectionsDir = await mkdtemp(join(tmpdir(), 'tracking-bench-projections-'));
  const spareDir = await mkdtemp(join(tmpdir(), 'tracking-bench-visibility-'));
  const leadsDir = await mkdtemp(join(tmpdir(), 'tracking-bench-leads-'));
  const sdkDir = await mkdtemp(join(tmpdir(), 'tracking-bench-sdk-'));
  const adminToken = randomBytes(24).toString('base64url');
  const children: Child[] = [];
  let failed = false;
  try {
    const [servicePort, baselinePort] = [await freePort(), await freePort()];
    // The ingest scenarios' service; with BENCH_SCENARIOS leaving them out, only the baseline runs here.
    const service = selected.has('ingest') ? startChild('service', join(root, 'dist', 'src', 'main.js'), serviceEnv(dataDir, servicePort, adminToken), root) : null;
    if (service) children.push(service);
    const baseline = startChild('baseline', join(root, 'dist', 'bench', 'baseline-server.js'), { ...process.env, PORT: String(baselinePort) }, root);
    children.push(baseline);
    const serviceUrl = `http://127.0.0.1:${servicePort}`;
    const baselineUrl = `http://127.0.0.1:${baselinePort}`;
    process.stderr.write(service ? `starting the service (embedded PostgreSQL in ${dataDir}) and the baseline\n` : 'starting the baseline\n');
    await Promise.all([service ? waitHealthy(service, `${serviceUrl}/healthz`, 180_000) : null, waitHealthy(baseline, `${baselineUrl}/healthz`, 30_000)]);
    const { licenseCode, accessToken } = service ? await createAccount(serviceUrl, adminToken) : { licenseCode: '', accessToken: '' };
    const pgPid = service ? await postmasterPid(dataDir) : null;

    const json = { 'content-type': 'application/json' };
    const targets: Record<Scenario['target'], Target> = {
      baseline: { url: baselineUrl, headers: json, child: baseline },
      service: { url: serviceUrl, headers: { ...json, authorization: `Bearer ${accessToken}` }, child: service ?? baseline },
    };
    const rows: Row[] = [];
    const store = service ? new pg.Pool({ connectionString: await storeUrl(dataDir), max: 1 }) : null;
    store?.on('error', () => undefined);
    try {
      for (const scenario of scenarios(licenseCode)) rows.push(await measure(scenario, targets[scenario.target], serviceUrl, pgPid, store));
    } finally {
      await store?.end();
    }
    const baselineRate = rows[0]?.reqPerSec ?? 0;
    for (const row of rows) row.vsBaseline = baselineRate > 0 ? row.reqPerSec / baselineRate : null;
    // The ingest service and the baseline are done: the cores go to the next scenarios.
    for (const child of [service, baseline]) {
      if (!child) continue;
      const outcome = await stopChild(child, 60_000, child === service ? dataDir : undefined);
      process.stderr.write(`${child.name} stopped (SIGTERM): ${outcome}\n`);
    }

    const projected: Projected = selected.has('apply') || selected.has('rebuild') || selected.has('visibility')
      ? await projectionScenarios(projectionsDir, spareDir, adminToken, children)
      : { projections: [], readModelProblems: [], visibility: null };

    const leads = selected.has('leads') ? await leadsScenario(leadsDir, adminToken, children) : [];
    const sdk = selected.has('sdk') ? await sdkScenario(sdkDir, adminToken, children) : null;

    failed = printTable(info, settings, rows, children, projected);
    if (leads.length) printLeads(leads, settings.leads, settings.leadsRequests);
    if (sdk && printSdk(sdk.rows, sdk.memory)) failed = true;
    if (process.env.BENCH_JSON) {
      const logs = Object.fromEntries(children.map((c) => [c.name, { problemLines: c.problemCount, first: c.problems }]));
      await writeFile(process.env.BENCH_JSON, `${JSON.stringify({ machine: info, settings, results: rows, ...projected, leads, sdk, logs }, null, 2)}\n`);
      console.log(`results written to ${process.env.BENCH_JSON}`);
    }
  } finally {
    try {
      for (const child of children.reverse()) {
        const outcome = await stopChild(child, 60_000);
        if (!outcome.startsWith('already exited')) console.log(`${child.name} stopped (SIGTERM): ${outcome}`);
      }
    } finally {
      // A service killed for hanging may have left its PostgreSQL running: stop those first.
      for (const dir of [dataDir, projectionsDir, spareDir, leadsDir, sdkDir]) {
        const pid = await postmasterPid(dir);
        try {
          if (pid !== null) process.kill(pid, 'SIGINT');
        } catch {
          // Gone already.
        }
      }
      for (const dir of [dataDir, projectionsDir, spareDir, leadsDir, sdkDir]) await rm(dir, { recursive: true, force: true });
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  if (interrupted.aborted) console.error(`bench interrupted (${String(interrupted.reason)}); children stopped, data removed`);
  else console.error('bench failed:', error);
  process.exitCode = 1;
});
