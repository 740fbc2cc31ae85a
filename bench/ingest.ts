import pg from 'pg';
import { allQueued, bulkBodies, bulkKinds, eventBody, productEventBody, queued, userBody } from './bodies.js';
import { WriteCeilingMeter, type WriteCeilings } from './ceilings.js';
import { stopChild, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { measureImport, type ImportRow } from './import.js';
import { measure, type Scenario, type Target } from './load.js';
import { storeUrl } from './projections.js';
import type { Row } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, startWorker, stopService, type Account, type RunningService } from './service.js';
import { compareServers, measureNaivePeer, measureServer, type ServerResult } from './servers.js';
import { say, selected, settings } from './settings.js';

/*
 * The groups on the first data directory: the ingest scenarios under each way of running the
 * service, the import to visible (import.ts), the hello-world baseline (the ceiling of a
 * single-item request) and the raw write ceilings (ceilings.ts), in an order that leaves no
 * projection a backlog to catch up on first:
 *  1. as `npm start` runs it (projections in a thread of its process): users single and bulk, then the import;
 *  2. PROJECTIONS=off beside a worker process (`npm run worker`): users single and bulk;
 *  3. PROJECTIONS=off alone (the targets' figures): for each single-item scenario the hello-world,
 *     the naive peer (Express + pg, one INSERT per request) then the scenario; for each bulk kind its write ceiling (PostgreSQL alone, the service idle)
 *     then its bulk scenario: each ceiling close in time to what is judged against it;
 *  4. users single (1,000 users, one user) against the naive peer, and users bulk against the
 *     users write ceiling, on this embedded server and on BENCH_DATABASE_URL's (servers.ts).
 * Each way gets its own account, so no scenario updates another's profiles.
 */

export interface IngestResults {
  rows: Row[];
  ceilings: WriteCeilings | null;
  imported: ImportRow | null;
  /** The ingest on the embedded server and on BENCH_DATABASE_URL's (servers.ts). */
  servers: ServerResult[];
}

const json = { 'content-type': 'application/json' };

function singleScenarios(license: string, config: string, which: ('users' | 'events' | 'productsevents')[]): Scenario[] {
  const base = `/v1/accounts/${license}`;
  const all: Record<(typeof which)[number], Scenario> = {
    users: { name: 'users single', config, path: `${base}/users`, items: 1, bulkKind: null, body: userBody, verify: queued },
    events: { name: 'events single', config, path: `${base}/events`, items: 1, bulkKind: null, body: eventBody, verify: queued },
    productsevents: { name: 'productsevents single', config, path: `${base}/productsevents`, items: 1, bulkKind: null, body: productEventBody, verify: queued },
  };
  return which.map((name) => all[name]);
}

function bulkScenarios(license: string, config: string, kinds: typeof bulkKinds): Scenario[] {
  return kinds.map((kind) => ({
    name: `${kind} bulk x${settings.bulkSize}`,
    config,
    path: `/v1/accounts/${license}/${kind}/bulk`,
    items: settings.bulkSize,
    bulkKind: kind,
    body: bulkBodies(kind, settings.bulkSize),
    verify: allQueued,
  }));
}

async function serviceTarget(service: RunningService, account: Account, store: pg.Pool | null, worker: Child | null): Promise<Target> {
  return {
    url: service.url,
    headers: { ...json, authorization: `Bearer ${account.accessToken}` },
    child: service.child,
    worker,
    pgPid: await postmasterPid(service.dataDir),
    store,
  };
}

/** The hello-world, measured like a single-item scenario: the ceiling of one small JSON request. */
function measureBaseline(children: Child[]): Promise<Row> {
  return measureServer(children, 'baseline', 'baseline-server.js', {}, async (url, child) => [
    // Same body size as a single event, so the baseline parses as much JSON as the service.
    { name: 'baseline hello-world', config: 'baseline', path: '/hello', items: 1, bulkKind: null, body: eventBody, verify: (r) => r === '{"ok":true}' },
    { url, headers: json, child, worker: null, pgPid: null, store: null },
  ]);
}

export async function ingestGroups(dataDir: string, adminToken: string, children: Child[]): Promise<IngestResults> {
  const results: IngestResults = { rows: [], ceilings: null, imported: null, servers: [] };
  const [ceilings, ingest, imports] = [selected.has('ceilings'), selected.has('ingest'), selected.has('import')];
  if (!ceilings && !ingest && !imports) {
    results.rows.push(await measureBaseline(children));
    return results;
  }
  // A connection to the store of the service running now, to wait for its projections.
  const store: { pool: pg.Pool | null } = { pool: null };
  let service: RunningService | null = null;
  const openStore = async (): Promise<pg.Pool> => {
    await store.pool?.end();
    const pool = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 1 });
    pool.on('error', () => undefined);
    return (store.pool = pool);
  };
  try {
    if (ingest || imports) {
      service = await startService('service (npm start)', dataDir, adminToken, children);
      const db = await openStore();
      if (ingest) {
        const account = await createAccount(service.url, adminToken, 'npm start');
        const target = await serviceTarget(service, account, db, null);
        for (const scenario of [...singleScenarios(account.licenseCode, 'npm start', ['users']), ...bulkScenarios(account.licenseCode, 'npm start', ['users'])]) {
          results.rows.push(await measure(scenario, target));
        }
      }
      if (imports) {
        const [warmup, account] = [await createAccount(service.url, adminToken, 'Import warm-up'), await createAccount(service.url, adminToken, 'Import')];
        results.imported = await measureImport(await serviceTarget(service, warmup, db, null), warmup, account, db);
      }
      await stopService(service);
      service = null;
    }
    if (!ingest && !ceilings) {
      results.rows.push(await measureBaseline(children));
      return results;
    }
    setPhase('ingest: restart');
    service = await startService('service (PROJECTIONS=off)', dataDir, adminToken, children, { projections: false });
    const db = await openStore();
    if (ingest) {
      const worker = startWorker('worker', dataDir, adminToken, children);
      const account = await createAccount(service.url, adminToken, 'with worker');
      const config = 'PROJECTIONS=off + worker';
      const target = await serviceTarget(service, account, db, worker);
      for (const scenario of [...singleScenarios(account.licenseCode, config, ['users']), ...bulkScenarios(account.licenseCode, config, ['users'])]) {
        results.rows.push(await measure(scenario, target));
      }
      say(`worker stopped (SIGTERM): ${await stopChild(worker, 60_000)}`);
    }
    // Each ceiling right before the scenario judged against it, the machine's speed swinging.
    const alone = await createAccount(service.url, adminToken, 'PROJECTIONS=off');
    const config = 'PROJECTIONS=off';
    const target = await serviceTarget(service, alone, null, null);
    if (!ingest) results.rows.push(await measureBaseline(children));
    for (const scenario of ingest ? singleScenarios(alone.licenseCode, config, ['users', 'events', 'productsevents']) : []) {
      // The hello-world, the naive peer, then the service: each ratio against ceilings just measured.
      results.rows.push(await measureBaseline(children));
      results.rows.push(await measureNaivePeer(children, { url: await storeUrl(dataDir), pgPid: await postmasterPid(dataDir) }, scenario));
      results.rows.push(await measure(scenario, target));
    }
    const meter = ceilings
      ? await WriteCeilingMeter.open({
          storeUrl: await storeUrl(dataDir),
          serviceUrl: service.url,
          account: await createAccount(service.url, adminToken, 'Ceilings'),
          pgPid: await postmasterPid(dataDir),
          seconds: settings.ceilingSeconds,
          rowsPerStatement: settings.ceilingRowsPerStatement,
        })
      : null;
    try {
      // Each kind's write ceiling right before its bulk scenario.
      for (const scenario of bulkScenarios(alone.licenseCode, config, bulkKinds)) {
        if (meter && scenario.bulkKind) await meter.measure(scenario.bulkKind);
        if (ingest) results.rows.push(await measure(scenario, target));
      }
      results.ceilings = meter?.result() ?? null;
    } finally {
      await meter?.close();
    }
  } finally {
    await store.pool?.end();
    if (service) await stopService(service);
  }
  if (ingest) results.servers = await compareServers(dataDir, adminToken, children);
  return results;
}
