import pg from 'pg';
import { createEventStore } from '../src/eventstore/index.js';
import { inIndexOrder } from '../src/eventstore/postgres-sql.js';
import { createLogger } from '../src/logger.js';
import { knownPersonsBulkBodies } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { coresBetween, cpuSnapshot } from './load.js';
import { storeUrl } from './projections.js';
import { table } from './report.js';
import { setPhase, watchRss } from './rss.js';
import { createAccount, postAll, startService, stopService } from './service.js';
import { say, settings } from './settings.js';

/*
 * The export of an account's events (docs/export.md) against its two ceilings, in the same run:
 * PostgreSQL reading the rows (their JSON text, in pages of the catch-up order, nothing parsed),
 * and the store's catch-up read with every sealed field opened (the service's own code in the bench
 * process, nothing written). The service runs with PROJECTIONS=off on a store of BENCH_EXPORT_EVENTS
 * (1,000,000) events of 50,000 persons, posted in bulk; each round runs the three in a turned order.
 * Measured: events/s and MB/s of each, the export's ratio to each ceiling, the service's CPU, and
 * its resident memory before and during the exports (flat: a page at a time).
 */

export interface ExportRate {
  what: 'PostgreSQL reads' | 'read and opened' | 'export (HTTP)';
  round: number;
  seconds: number;
  events: number;
  bytes: number;
  cpu: { node: number | null; postgres: number | null; other: number | null } | null;
}

export interface ExportResult {
  events: number;
  fillSeconds: number;
  rates: ExportRate[];
  rssBeforeBytes: number | null;
  rssDuringBytes: number | null;
}

// More persons than a process caches keys of (person-keys.ts): the opening reads keys as a store of many people does.
const persons = 50_000;
const pageRows = 2_000;

/** The rows of the account in catch-up order, as PostgreSQL gives their text: the read ceiling. */
async function readRows(pool: pg.Pool, accountId: string): Promise<{ events: number; bytes: number }> {
  let after: [string, number] = ['0', 0];
  let events = 0;
  let bytes = 0;
  const client = await pool.connect();
  try {
    for (;;) {
      await client.query(inIndexOrder);
      const { rows } = await client.query<{ t: string; p: number; data: string; metadata: string }>(
        `SELECT transaction_id::text AS t, global_position AS p, data::text AS data, metadata::text AS metadata FROM events
         WHERE account_id = $1 AND (transaction_id, global_position) > ($2::xid8, $3::bigint) ORDER BY transaction_id, global_position LIMIT ${pageRows}`,
        [accountId, after[0], after[1]],
      );
      await client.query('COMMIT');
      for (const row of rows) bytes += row.data.length + row.metadata.length;
      events += rows.length;
      const last = rows.at(-1);
      if (!last || rows.length < pageRows) return { events, bytes };
      after = [last.t, last.p];
    }
  } finally {
    client.release();
  }
}

/** The store's catch-up read of the account, opened, as the export reads it: the second ceiling. */
async function readOpened(pool: pg.Pool, accountId: string): Promise<{ events: number; bytes: number }> {
  const store = createEventStore({ eventStoreUrl: undefined, queryTimeoutMs: 60_000 }, pool, createLogger('warn'));
  let checkpoint: string | null = null;
  let events = 0;
  let bytes = 0;
  for (;;) {
    const page = await store.readAll(checkpoint, pageRows, { accountId });
    events += page.events.length;
    bytes += page.bytes;
    checkpoint = page.checkpoint;
    if (page.atEnd) return { events, bytes };
  }
}

/** GET .../export, the body read as it streams in and counted, never kept. */
async function exportOver(url: string, licenseCode: string, accessToken: string): Promise<{ events: number; bytes: number }> {
  const response = await fetch(`${url}/admin/v1/accounts/${licenseCode}/export`, { headers: { authorization: `Bearer ${accessToken}` } });
  if (response.status !== 200 || !response.body) throw new Error(`the export answered ${response.status}`);
  let events = 0;
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.length;
    for (const byte of chunk) if (byte === 10) events += 1;
  }
  return { events, bytes };
}

export async function exportGroup(dataDir: string, adminToken: string, children: Child[]): Promise<ExportResult> {
  const service = await startService('export-service', dataDir, adminToken, children, { projections: false });
  const pool = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 4 });
  try {
    const account = await createAccount(service.url, adminToken, 'Export');
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
    const accountId = rows[0]?.id as string;
    setPhase('export: fill');
    const fillStarted = performance.now();
    const total = settings.exportEvents;
    // Each body names every one of the persons once; as many as make the events asked for.
    const bodies = knownPersonsBulkBodies('export', persons, settings.bulkSize);
    const all = Array.from({ length: Math.ceil(total / settings.bulkSize) }, (_, i) => bodies[i % bodies.length] as string);
    say(`export: posting ${total.toLocaleString('en-US')} events in bulk of ${settings.bulkSize}`);
    await postAll(`${service.url}/v1/accounts/${account.licenseCode}/events/bulk`, account.accessToken, all, 16);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    await pool.query('VACUUM ANALYZE events');
    const target = { url: service.url, headers: {}, child: service.child, worker: null, pgPid: await postmasterPid(dataDir), store: null };
    const rss = (): number | null => service.child.rss.maxBytes;
    const rssBeforeBytes = rss();
    const during = watchRss(service.child.process.pid as number, service.child.exited);
    const measures = {
      'PostgreSQL reads': () => readRows(pool, accountId),
      'read and opened': () => readOpened(pool, accountId),
      'export (HTTP)': () => exportOver(service.url, account.licenseCode, account.accessToken),
    } as const;
    const names = Object.keys(measures) as ExportRate['what'][];
    const rates: ExportRate[] = [];
    setPhase('export: measured');
    for (let round = 1; round <= settings.exportRounds && !interrupted.aborted; round += 1) {
      for (const what of round % 2 ? names : [...names].reverse()) {
        const before = await cpuSnapshot(target);
        const started = performance.now();
        const { events, bytes } = await measures[what]();
        const seconds = (performance.now() - started) / 1000;
        const cpu = coresBetween(before, await cpuSnapshot(target), seconds);
        rates.push({ what, round, seconds, events, bytes, cpu: { node: cpu.node, postgres: cpu.postgres, other: cpu.other } });
        say(`export round ${round}: ${what} ${Math.round(events / seconds).toLocaleString('en-US')} events/s`);
      }
    }
    return { events: total, fillSeconds, rates, rssBeforeBytes, rssDuringBytes: during.maxBytes };
  } finally {
    await pool.end();
    await stopService(service);
  }
}

const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));
const mb = (bytes: number | null): string => (bytes === null ? '-' : `${(bytes / 2 ** 20).toFixed(0)} MiB`);

/** Prints the rates and ratios; true when an export did not give every event. */
export function printExport(r: ExportResult): boolean {
  console.log(`\nexport of an account of ${r.events.toLocaleString('en-US')} events (posted in ${r.fillSeconds.toFixed(0)} s), against PostgreSQL reading the rows and the store's read with fields opened`);
  const exported = r.rates.filter((rate) => rate.what === 'export (HTTP)');
  const lines = r.rates.map((rate) => {
    const sameRound = (what: ExportRate['what']): ExportRate | undefined => r.rates.find((o) => o.round === rate.round && o.what === what);
    const perSecond = (x: ExportRate | undefined): number | null => (x ? x.events / x.seconds : null);
    const ratio = (ceiling: ExportRate['what']): string => (rate.what === 'export (HTTP)' ? fixed((perSecond(rate) ?? 0) / (perSecond(sameRound(ceiling)) ?? NaN), 2) : '');
    return [
      `${rate.round}: ${rate.what}`,
      Math.round(rate.events / rate.seconds).toLocaleString('en-US'),
      fixed(rate.bytes / 2 ** 20 / rate.seconds, 1),
      fixed(rate.seconds, 1),
      ratio('PostgreSQL reads'),
      ratio('read and opened'),
      fixed(rate.cpu?.node ?? null, 2),
      fixed(rate.cpu?.postgres ?? null, 2),
      fixed(rate.cpu?.other ?? null, 2),
    ];
  });
  console.log(table(['round: measure', 'events/s', 'MB/s', 'seconds', 'vs PG reads', 'vs opened', 'CPU node', 'CPU pg', 'CPU other'], lines));
  console.log(`service resident memory: ${mb(r.rssBeforeBytes)} before the exports, at most ${mb(r.rssDuringBytes)} during them`);
  console.log('(MB/s: of the rows\' JSON text for the ceilings, of the NDJSON for the export; CPU node: the service process, in cores)');
  const short = exported.filter((rate) => rate.events !== r.events);
  for (const rate of short) console.log(`PROBLEM: export of round ${rate.round} gave ${rate.events} events of ${r.events}`);
  return short.length > 0;
}
