import pg from 'pg';
import type { Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { measureCatchUp } from './catch-up.js';
import { fill, measureReadOnly, measureRebuild, storeUrl } from './projections.js';
import type { ProjectionRow, VisibilityRow } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, serviceEnv, startService, stopService, type Account } from './service.js';
import { root, say, selected, settings } from './settings.js';
import { countByType } from './store-fill.js';
import { measureVisibility } from './visibility.js';

/*
 * The projection groups, on a data directory of their own. Apply and rebuild run beside the
 * service started with PROJECTIONS=off (it owns the embedded server and the accounts); visibility
 * restarts it as `npm start` runs it, on the store the other two left when its projections are
 * up to date (a store they did not finish would be a rebuild under load), else on a fresh one.
 */

export interface Projected {
  projections: ProjectionRow[];
  readModelProblems: string[];
  visibility: VisibilityRow | null;
  /** Events of each type in the store the projections applied: the mix their write ceiling is of. */
  storeMix: Map<string, number>;
}

const batchSizeEnv = (): Record<string, string> => (settings.projectionBatchSize > 0 ? { PROJECTION_BATCH_SIZE: String(settings.projectionBatchSize) } : {});

export async function projectionGroups(dataDir: string, spareDir: string, adminToken: string, children: Child[]): Promise<Projected> {
  const result: Projected = { projections: [], readModelProblems: [], visibility: null, storeMix: new Map() };
  const fillsStore = selected.has('apply') || selected.has('rebuild');
  let service = await startService(fillsStore ? 'service (projections group, PROJECTIONS=off)' : 'service (visibility, npm start)', dataDir, adminToken, children, { projections: !fillsStore });
  let accounts: Account[] = [];
  for (let i = 0; i < 4; i += 1) accounts.push(await createAccount(service.url, adminToken, `Bench ${i}`));
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
    const readCeiling = async (): Promise<void> => {
      setPhase('read ceiling');
      say('reading the whole store once (the raw read ceiling: the catch-up query alone)');
      const read = await measureReadOnly(url, storeEvents, 15, settings.projectionBatchSize);
      readRate = read.eventsPerSec;
      result.projections.push(read);
    };
    if (selected.has('apply')) {
      setPhase('apply: fill');
      say(`apply: filling the store with ${settings.applyEvents.toLocaleString('en-US')} events`);
      await fill(db, 0, settings.applyEvents, accountIds, startMs);
      storeEvents = settings.applyEvents;
      result.storeMix = await countByType(db);
      await readCeiling();
      setPhase('apply: catch-up');
      say(`apply: a projection worker process catching up from an empty checkpoint (limit ${limitSeconds} s)`);
      const workerEnv = serviceEnv(dataDir, 0, adminToken, batchSizeEnv());
      const catchUp = await measureCatchUp({ root, env: workerEnv, db, pgPid, readRate, limitSeconds, workers: 1, label: 'catch-up' }, children);
      result.projections.push(...catchUp.rows);
      result.readModelProblems.push(...catchUp.problems.map((p) => `catch-up: ${p}`));
      upToDate = catchUp.caughtUp;
    }
    if (selected.has('rebuild')) {
      setPhase('rebuild: fill');
      const target = Math.max(settings.rebuildEvents, storeEvents);
      say(`rebuild: filling the store up to ${target.toLocaleString('en-US')} events`);
      if (target > storeEvents) await fill(db, storeEvents, target, accountIds, startMs);
      storeEvents = target;
      result.storeMix = await countByType(db);
      if (!selected.has('apply')) await readCeiling();
      setPhase('rebuild');
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
      await stopService(service);
      if (!upToDate) {
        say('the projections are behind the store: visibility runs on a fresh data directory');
        dataDir = spareDir;
        storeEvents = 0;
      }
      setPhase('visibility: restart');
      service = await startService('service (visibility, npm start)', dataDir, adminToken, children);
      if (!upToDate) accounts = [await createAccount(service.url, adminToken)];
    }
    const account = accounts[0] as Account;
    setPhase('visibility');
    result.visibility = await measureVisibility({
      serviceUrl: service.url,
      license: account.licenseCode,
      token: account.accessToken,
      child: service.child,
      pgPid: await postmasterPid(dataDir),
      rate: settings.visibilityRate,
      warmupSeconds: settings.warmupSeconds,
      seconds: settings.visibilitySeconds,
      storeEvents,
    });
  }
  await stopService(service);
  return result;
}
