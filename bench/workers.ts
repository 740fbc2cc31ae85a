import pg from 'pg';
import { measureCatchUp, type WorkerShare } from './catch-up.js';
import type { Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { forgetProjected } from './progress.js';
import { fill, storeUrl } from './projections.js';
import type { ProjectionRow } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, serviceEnv, startService, stopService } from './service.js';
import { root, say, settings } from './settings.js';
import { countByType } from './store-fill.js';

/*
 * Workers sharing the parts: a store filled in SQL (store-fill.ts) over BENCH_WORKERS_ACCOUNTS (64)
 * accounts, so that the accounts hash into all 16 parts, then a catch-up from nothing projected by
 * one worker process, then by two started together, alternately (one, two, one, two for
 * BENCH_WORKERS_ROUNDS 2), the read models emptied between runs. Each run: store events/s, the
 * parts each worker held (as the status shows them) and the events of its parts' accounts.
 */

export interface WorkersRun {
  workers: number;
  round: number;
  /** The group's first row: store events applied by all four, and its rate. */
  row: ProjectionRow;
  shares: WorkerShare[];
  claims: number;
  evenAfterSeconds: number | null;
  caughtUp: boolean;
}

export interface WorkersResult {
  accounts: number;
  storeEvents: number;
  storeMix: Map<string, number>;
  runs: WorkersRun[];
  problems: string[];
}

const batchSizeEnv = (): Record<string, string> => (settings.projectionBatchSize > 0 ? { PROJECTION_BATCH_SIZE: String(settings.projectionBatchSize) } : {});

export async function workersGroup(dataDir: string, adminToken: string, children: Child[]): Promise<WorkersResult> {
  setPhase('workers: fill');
  const service = await startService('service (workers group, PROJECTIONS=off)', dataDir, adminToken, children, { projections: false });
  const db = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 2 });
  db.on('error', () => undefined);
  const result: WorkersResult = { accounts: settings.workersAccounts, storeEvents: settings.workersEvents, storeMix: new Map(), runs: [], problems: [] };
  try {
    const licenses: string[] = [];
    for (let i = 0; i < settings.workersAccounts; i += 1) licenses.push((await createAccount(service.url, adminToken, `Workers ${i}`)).licenseCode);
    const accountIds = (await db.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = ANY($1) ORDER BY name', [licenses])).rows.map((r) => r.id);
    say(`workers: filling the store with ${settings.workersEvents.toLocaleString('en-US')} events over ${accountIds.length} accounts`);
    await fill(db, 0, settings.workersEvents, accountIds, Date.now() - settings.workersEvents - 3_600_000);
    result.storeMix = await countByType(db);
    const pgPid = await postmasterPid(dataDir);
    const env = serviceEnv(dataDir, 0, adminToken, batchSizeEnv());
    for (let round = 1; round <= settings.workersRounds; round += 1) {
      for (const workers of [1, 2]) {
        if (result.runs.length > 0) await forgetProjected(db);
        setPhase(`workers: ${workers} catching up, round ${round}`);
        const label = `catch-up, ${workers} worker process${workers === 1 ? '' : 'es'}`;
        say(`workers: ${label} (round ${round} of ${settings.workersRounds}, limit ${settings.projectionLimitSeconds} s)`);
        const run = await measureCatchUp({ root, env, db, pgPid, readRate: null, limitSeconds: settings.projectionLimitSeconds, workers, label }, children);
        const first = run.rows[0];
        if (!first) throw new Error('the catch-up returned no row');
        result.runs.push({ workers, round, row: first, shares: run.workers, claims: run.claims, evenAfterSeconds: run.evenAfterSeconds, caughtUp: run.caughtUp });
        result.problems.push(...run.problems.map((p) => `${label}, round ${round}: ${p}`));
      }
    }
  } finally {
    await db.end();
    await stopService(service);
  }
  return result;
}

const mean = (values: number[]): number => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

/** Store events/s of the two-worker runs over the one-worker runs (means over the rounds). */
export function twoOverOne(result: WorkersResult): { one: number; two: number; ratio: number } {
  const rate = (workers: number): number => mean(result.runs.filter((r) => r.workers === workers).map((r) => r.row.eventsPerSec));
  const [one, two] = [rate(1), rate(2)];
  return { one, two, ratio: two / one };
}

/** Whether every two-worker run ended with the parts split evenly, 8 and 8. */
export function evenSplit(result: WorkersResult): boolean {
  const twos = result.runs.filter((r) => r.workers === 2);
  return twos.length > 0 && twos.every((r) => r.shares.length === 2 && r.shares.every((s) => s.partsAtEnd.length === 8));
}
