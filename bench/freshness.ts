import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { allQueued, bulkBodies } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { coresBetween, cpuSnapshot, load, type Scenario, type Target } from './load.js';
import { storeUrl } from './projections.js';
import type { Row } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, stopService } from './service.js';
import { say, settings } from './settings.js';
import type { ProbeResult } from './visibility-probe.js';
import { quantile, startProbe } from './visibility.js';

/**
 * Freshness of one account while another imports: the service as `npm start` runs it (projection
 * worker in a thread of its process) takes BENCH_FRESHNESS_PROFILES (100,000) new profiles of one account in
 * bulk requests of 100 (the API's most) on BENCH_FRESHNESS_CONNECTIONS (8) connections, while a
 * probe of another account posts a single user every 90-110 ms and polls GET leads/<id> every
 * 5-10 ms until it is served. Before that, the idle service: BENCH_IDLE_PROBES (200) probes, each
 * posted 200-600 ms after the one before became visible (after 10 not counted), so that every
 * sample finds the worker waiting with nothing to do; then the probe alone at its import pace for
 * a few seconds. Accounts take turns for the worker's lanes (docs/projections.md), so the
 * probe's leads should not wait behind the import's backlog.
 */

export interface ProbeWindow {
  label: string;
  probes: number;
  /** From the POST answered to the first GET answering 200, ms. */
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The p99 from the POST sent: the POST's own latency included. */
  p99FromSentMs: number;
  postP50Ms: number;
  postP99Ms: number;
  /** Round trips of the polls (404 or 200): how long the API itself took to answer a read. */
  getP50Ms: number;
  getP99Ms: number;
  notVisible: number;
  failures: string[];
}

export interface FreshnessRow {
  /** One probe at a time on the idle service; null with BENCH_IDLE_PROBES=0. */
  idle: ProbeWindow | null;
  quiet: ProbeWindow;
  underImport: ProbeWindow;
  profiles: number;
  /** Importer's leads when the wait stopped: all of them, unless the limit passed. */
  visible: number;
  postSeconds: number;
  /** From the first import request sent until every profile was in the importer's leads. */
  visibleSeconds: number;
  importP50Ms: number;
  importP99Ms: number;
  failedResponses: number;
  cpuCores: Row['cpuCores'];
}

const quietSeconds = 5;

function windowOf(label: string, r: ProbeResult): ProbeWindow {
  return {
    label,
    probes: r.visibleMs.length + r.notVisible,
    p50Ms: quantile(r.visibleMs, 0.5),
    p95Ms: quantile(r.visibleMs, 0.95),
    p99Ms: quantile(r.visibleMs, 0.99),
    maxMs: r.visibleMs.length ? Math.max(...r.visibleMs) : NaN,
    p99FromSentMs: quantile(r.fromSentMs, 0.99),
    postP50Ms: quantile(r.postMs, 0.5),
    postP99Ms: quantile(r.postMs, 0.99),
    getP50Ms: quantile(r.getMs, 0.5),
    getP99Ms: quantile(r.getMs, 0.99),
    notVisible: r.notVisible,
    failures: r.failures,
  };
}

async function leadsOf(db: pg.Pool, license: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM leads WHERE account_id = (SELECT id FROM accounts WHERE license_code = $1)', [license]);
  return rows[0]?.n ?? 0;
}

export async function freshnessGroup(dataDir: string, adminToken: string, children: Child[]): Promise<FreshnessRow> {
  setPhase('freshness: start');
  const service = await startService('service (freshness, npm start)', dataDir, adminToken, children);
  const db = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 1 });
  db.on('error', () => undefined);
  try {
    const [importer, prober] = [await createAccount(service.url, adminToken, 'Freshness import'), await createAccount(service.url, adminToken, 'Freshness probe')];
    const probeSettings = (seconds: number) => ({
      serviceUrl: service.url,
      license: prober.licenseCode,
      token: prober.accessToken,
      runId: Date.now().toString(36),
      seconds,
      gapMs: [90, 110] as [number, number],
      pollMs: [5, 10] as [number, number],
      giveUpMs: 10_000,
    });
    let idle: ProbeWindow | null = null;
    if (settings.idleProbes > 0) {
      setPhase('freshness: idle');
      say(`freshness: ${settings.idleProbes} probes of the idle service, one at a time, 200-600 ms apart`);
      const idleProbe = { ...probeSettings(3_600), gapMs: [200, 600] as [number, number], count: settings.idleProbes, oneAtATime: true, warmup: 10 };
      idle = windowOf('idle, one at a time', await startProbe(idleProbe).result);
    }
    setPhase('freshness: probe alone');
    say(`freshness: the probe alone (${quietSeconds} s)`);
    const quiet = windowOf('probe alone', await startProbe(probeSettings(quietSeconds)).result);

    setPhase('freshness: import');
    const requests = Math.ceil(settings.freshnessProfiles / settings.bulkSize);
    const profiles = requests * settings.bulkSize;
    const connections = Math.min(settings.freshnessConnections, requests);
    say(`freshness: ${profiles.toLocaleString('en-US')} profiles imported into one account on ${connections} connections while the probe posts into another (limit ${settings.projectionLimitSeconds} s)`);
    const target: Target = {
      url: service.url,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${importer.accessToken}` },
      child: service.child,
      worker: null,
      pgPid: await postmasterPid(dataDir),
      store: db,
    };
    const scenario: Scenario = { name: 'freshness import', config: 'npm start', path: `/v1/accounts/${importer.licenseCode}/users/bulk`, items: settings.bulkSize, bulkKind: 'users', body: bulkBodies('users', settings.bulkSize), verify: allQueued };
    const probe = startProbe(probeSettings(settings.projectionLimitSeconds));
    const cpuBefore = await cpuSnapshot(target);
    const started = performance.now();
    const result = await load(target, scenario, settings.durationSeconds, { n: 0 }, { amount: requests, connections });
    const posted = performance.now();
    let visible = 0;
    while ((visible = await leadsOf(db, importer.licenseCode)) < profiles) {
      interrupted.throwIfAborted();
      if (performance.now() - started > settings.projectionLimitSeconds * 1000) break;
      await sleep(50);
    }
    const done = performance.now();
    const cpuAfter = await cpuSnapshot(target);
    probe.stop();
    const underImport = windowOf('under the import', await probe.result);
    return {
      idle,
      quiet,
      underImport,
      profiles,
      visible,
      postSeconds: (posted - started) / 1000,
      visibleSeconds: (done - started) / 1000,
      importP50Ms: result.latency.p50,
      importP99Ms: result.latency.p99,
      failedResponses: result.mismatches + result.errors,
      cpuCores: coresBetween(cpuBefore, cpuAfter, (done - started) / 1000),
    };
  } finally {
    await db.end();
    await stopService(service);
  }
}
