import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { allQueued, bulkBodies, eventBody, productEventBody, queued, userBody } from './bodies.js';
import { freePort, interrupted, startChild, stopChild, waitHealthy, type Child } from './children.js';
import { ownCpuSeconds, postmasterPid, treeCpuSeconds } from './cpu.js';
import { printTable, type Row } from './report.js';

/*
 * `npm run bench`: the service (embedded PostgreSQL, fresh data directory) and an Express
 * hello-world baseline as child processes, loaded one scenario after another with autocannon.
 * Settings: BENCH_CONNECTIONS (64), BENCH_DURATION seconds (10), BENCH_WARMUP seconds (2),
 * BENCH_JSON (a path: also write the results there). Exits 1 if any response was not a success.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got '${raw}'`);
  return value;
}

const settings = {
  connections: intEnv('BENCH_CONNECTIONS', 64, 1),
  durationSeconds: intEnv('BENCH_DURATION', 10, 1),
  // Not measured: lets the JIT and the caches (accounts, attribute types) settle first.
  warmupSeconds: intEnv('BENCH_WARMUP', 2, 0),
  bulkSize: 100,
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
  return { sum: value('eventstore_append_batch_events_sum'), count: value('eventstore_append_batch_events_count') };
}

async function cpuSnapshot(target: Target, pgPid: number | null): Promise<{ node: number | null; pg: number | null; gen: NodeJS.CpuUsage }> {
  const pid = target.child.process.pid;
  return {
    node: pid === undefined ? null : await ownCpuSeconds(pid),
    pg: pgPid === null ? null : await treeCpuSeconds(pgPid),
    gen: process.cpuUsage(),
  };
}

async function measure(scenario: Scenario, target: Target, serviceUrl: string, pgPid: number | null): Promise<Row> {
  const counter = { n: 0 };
  if (settings.warmupSeconds > 0) {
    process.stderr.write(`warming up ${scenario.name} (${settings.warmupSeconds} s)\n`);
    await load(target, scenario, settings.warmupSeconds, counter);
  }
  interrupted.throwIfAborted();
  process.stderr.write(`measuring ${scenario.name} (${settings.durationSeconds} s)\n`);
  const commitsBefore = await commitStats(serviceUrl);
  const cpuBefore = await cpuSnapshot(target, pgPid);
  const started = performance.now();
  const result = await load(target, scenario, settings.durationSeconds, counter);
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuSnapshot(target, pgPid);
  const commitsAfter = await commitStats(serviceUrl);
  interrupted.throwIfAborted();
  const cores = (before: number | null, after: number | null): number | null =>
    before === null || after === null ? null : (after - before) / seconds;
  const gen = process.cpuUsage(cpuBefore.gen);
  const commits = commitsAfter.count - commitsBefore.count;
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
    cpuCores: {
      node: cores(cpuBefore.node, cpuAfter.node),
      postgres: scenario.target === 'service' ? cores(cpuBefore.pg, cpuAfter.pg) : null,
      loadgen: (gen.user + gen.system) / 1e6 / seconds,
    },
  };
}

async function createAccount(serviceUrl: string, adminToken: string): Promise<{ licenseCode: string; accessToken: string }> {
  const response = await fetch(`${serviceUrl}/admin/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench' }),
  });
  const body = (await response.json()) as { licenseCode?: unknown; accessToken?: unknown };
  if (response.status !== 201 || typeof body.licenseCode !== 'string' || typeof body.accessToken !== 'string') {
    throw new Error(`account creation answered ${response.status}: ${JSON.stringify(body)}`);
  }
  return { licenseCode: body.licenseCode, accessToken: body.accessToken };
}

function scenarios(license: string): Scenario[] {
  const base = `/v1/accounts/${license}`;
  return [
    // Same body size as a single event, so the baseline parses as much JSON as the service.
    { name: 'baseline hello-world', target: 'baseline', path: '/hello', items: 1, body: eventBody, verify: (r) => r === '{"ok":true}' },
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

async function main(): Promise<void> {
  const info = machine();
  const dataDir = await mkdtemp(join(tmpdir(), 'tracking-bench-'));
  const adminToken = randomBytes(24).toString('base64url');
  const children: Child[] = [];
  let failed = false;
  try {
    const [servicePort, baselinePort] = [await freePort(), await freePort()];
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.DATABASE_URL;
    Object.assign(env, {
      DATA_DIR: dataDir,
      PORT: String(servicePort),
      ADMIN_TOKEN: adminToken,
      PRODUCTSEVENTS_RATE_LIMIT: '0',
      INGEST_RATE_LIMIT: '0',
      LOG_LEVEL: 'warn',
    });
    const service = startChild('service', join(root, 'dist', 'src', 'main.js'), env, root);
    children.push(service);
    const baseline = startChild('baseline', join(root, 'dist', 'bench', 'baseline-server.js'), { ...process.env, PORT: String(baselinePort) }, root);
    children.push(baseline);
    const serviceUrl = `http://127.0.0.1:${servicePort}`;
    const baselineUrl = `http://127.0.0.1:${baselinePort}`;
    process.stderr.write(`starting the service (embedded PostgreSQL in ${dataDir}) and the baseline\n`);
    await Promise.all([waitHealthy(service, `${serviceUrl}/healthz`, 180_000), waitHealthy(baseline, `${baselineUrl}/healthz`, 30_000)]);
    const { licenseCode, accessToken } = await createAccount(serviceUrl, adminToken);
    const pgPid = await postmasterPid(dataDir);

    const json = { 'content-type': 'application/json' };
    const targets: Record<Scenario['target'], Target> = {
      baseline: { url: baselineUrl, headers: json, child: baseline },
      service: { url: serviceUrl, headers: { ...json, authorization: `Bearer ${accessToken}` }, child: service },
    };
    const rows: Row[] = [];
    for (const scenario of scenarios(licenseCode)) rows.push(await measure(scenario, targets[scenario.target], serviceUrl, pgPid));
    const baselineRate = rows[0]?.reqPerSec ?? 0;
    for (const row of rows) row.vsBaseline = baselineRate > 0 ? row.reqPerSec / baselineRate : null;

    failed = printTable(info, settings, rows, children);
    if (process.env.BENCH_JSON) {
      const logs = Object.fromEntries(children.map((c) => [c.name, { problemLines: c.problemCount, first: c.problems }]));
      await writeFile(process.env.BENCH_JSON, `${JSON.stringify({ machine: info, settings, results: rows, logs }, null, 2)}\n`);
      console.log(`results written to ${process.env.BENCH_JSON}`);
    }
  } finally {
    try {
      for (const child of children.reverse()) {
        const outcome = await stopChild(child, 60_000, child.name === 'service' ? dataDir : undefined);
        console.log(`${child.name} stopped (SIGTERM): ${outcome}`);
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((error: unknown) => {
  if (interrupted.aborted) console.error(`bench interrupted (${String(interrupted.reason)}); children stopped, data removed`);
  else console.error('bench failed:', error);
  process.exitCode = 1;
});
