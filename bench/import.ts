import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { allQueued, bulkBodies } from './bodies.js';
import { interrupted } from './children.js';
import { coresBetween, cpuSnapshot, drain, load, type Scenario, type Target } from './load.js';
import { table, type Row, type VsCeiling } from './report.js';
import { setPhase } from './rss.js';
import type { Account } from './service.js';
import { say, settings } from './settings.js';

/**
 * Import to visible: the service as `npm start` runs it (projection workers in its process) takes
 * BENCH_IMPORT_PROFILES (50,000) new profiles in bulk requests of 100 on BENCH_CONNECTIONS
 * connections; the time runs from the first request sent until the leads read model holds every
 * one of them.
 */

export interface ImportRow {
  profiles: number;
  requests: number;
  /** From the first request sent to the last answered. */
  postSeconds: number;
  /** From the first request sent until every profile was in the leads read model. */
  visibleSeconds: number;
  /** Profiles over visibleSeconds: the import's rate. */
  profilesPerSec: number;
  /** Profiles over postSeconds: the ingest alone. */
  postedPerSec: number;
  p50Ms: number;
  p99Ms: number;
  failedResponses: number;
  /** Leads of the account when the wait stopped: all of them, unless the limit passed. */
  visible: number;
  cpuCores: Row['cpuCores'];
  ceiling: VsCeiling | null;
}

async function leadsOf(db: pg.Pool, license: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM leads WHERE account_id = (SELECT id FROM accounts WHERE license_code = $1)',
    [license],
  );
  return rows[0]?.n ?? 0;
}

export async function measureImport(target: Target, warmup: Account, account: Account, db: pg.Pool): Promise<ImportRow> {
  const scenario = (license: string): Scenario => ({
    name: 'import',
    config: 'npm start',
    path: `/v1/accounts/${license}/users/bulk`,
    items: settings.bulkSize,
    bulkKind: 'users',
    body: bulkBodies('users', settings.bulkSize),
    verify: allQueued,
  });
  const auth = (a: Account): Target => ({ ...target, headers: { ...target.headers, authorization: `Bearer ${a.accessToken}` } });
  setPhase('import');
  if (settings.warmupSeconds > 0) {
    say(`warming up import (users bulk into another account, ${settings.warmupSeconds} s)`);
    await load(auth(warmup), scenario(warmup.licenseCode), settings.warmupSeconds, { n: 0 });
    await drain(target.store, 'the warm-up');
  }
  const requests = Math.ceil(settings.importProfiles / settings.bulkSize);
  const profiles = requests * settings.bulkSize;
  say(`import: ${profiles.toLocaleString('en-US')} profiles in ${requests} bulk requests, until all are in the leads read model (limit ${settings.projectionLimitSeconds} s)`);
  const cpuBefore = await cpuSnapshot(target);
  const started = performance.now();
  const result = await load(auth(account), scenario(account.licenseCode), settings.durationSeconds, { n: 0 }, { amount: requests, connections: Math.min(settings.connections, requests) });
  const posted = performance.now();
  let visible = 0;
  while ((visible = await leadsOf(db, account.licenseCode)) < profiles) {
    interrupted.throwIfAborted();
    if (performance.now() - started > settings.projectionLimitSeconds * 1000) break;
    await sleep(50);
  }
  const done = performance.now();
  const cpuAfter = await cpuSnapshot(target);
  const visibleSeconds = (done - started) / 1000;
  const postSeconds = (posted - started) / 1000;
  // The other three projections too, before the next scenario.
  await drain(target.store, 'the import');
  return {
    profiles,
    requests: result.requests.total,
    postSeconds,
    visibleSeconds,
    profilesPerSec: visible / visibleSeconds,
    postedPerSec: profiles / postSeconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    // Mismatches include the non-2xx replies.
    failedResponses: result.mismatches + result.errors,
    visible,
    cpuCores: coresBetween(cpuBefore, cpuAfter, visibleSeconds),
    ceiling: null,
  };
}

const whole = (value: number): string => Math.round(value).toLocaleString('en-US');
const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));

/** Prints the import row; returns true when a request failed or a profile never showed. */
export function printImport(r: ImportRow): boolean {
  console.log(`\nimport to visible (service as npm start runs it; ${whole(r.profiles)} new profiles, bulk requests of ${settings.bulkSize} on ${settings.connections} connections)`);
  const header = ['profiles', 'in leads', 'posted s', 'visible s', 'profiles/s', 'posted/s', 'vs ceiling', 'ceiling', 'p50 ms', 'p99 ms', 'failed', 'CPU node', 'CPU pg', 'CPU loadgen', 'CPU other'];
  const line = [
    whole(r.profiles),
    whole(r.visible),
    r.postSeconds.toFixed(1),
    r.visibleSeconds.toFixed(1),
    whole(r.profilesPerSec),
    whole(r.postedPerSec),
    fixed(r.ceiling?.ratio ?? null, 2),
    r.ceiling?.ceiling ?? '-',
    fixed(r.p50Ms, 1),
    fixed(r.p99Ms, 1),
    String(r.failedResponses),
    fixed(r.cpuCores.node, 2),
    fixed(r.cpuCores.postgres, 2),
    fixed(r.cpuCores.loadgen, 2),
    fixed(r.cpuCores.other, 2),
  ];
  console.log(table(header, [line]));
  console.log('(profiles/s: profiles in the leads read model over the time from the first request sent; posted/s: over the time to the last reply)');
  const bad = r.failedResponses > 0 || r.visible < r.profiles;
  if (bad) console.log(`FAILED in import: ${r.failedResponses} failed responses, ${whole(r.profiles - r.visible)} profiles not in leads`);
  return bad;
}
