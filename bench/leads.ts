import pg from 'pg';
import type { Child } from './children.js';
import { fillLeads, knownLead, rareLastName } from './leads-fill.js';
import { storeUrl } from './projections.js';
import { table } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, stopService } from './service.js';

/**
 * The leads scenario: one account filled with BENCH_LEADS leads (1,000,000) and another with a
 * tenth of that, written into the read model in SQL, then the list and its searches over HTTP,
 * each request BENCH_LEADS_REQUESTS times (20) in turn: the list, its searches and its filter by a
 * custom attribute, each reply with its total. Server time is the service's own
 * `Server-Timing: app;dur=` (router to reply), against the 200 ms limit.
 */

export const leadsLimitMs = 200;

export interface LeadsRow {
  query: string;
  path: string;
  rows: number;
  /** The reply's total: the count, `about` before an estimate. */
  total: string;
  p50Ms: number;
  p99Ms: number;
  roundTripP50Ms: number;
}

export interface LeadsOptions {
  serviceUrl: string;
  license: string;
  token: string;
  accountId: string;
  otherAccountId: string;
  leads: number;
  requests: number;
  db: pg.Pool;
}

const say = (line: string): void => void process.stderr.write(`${line}\n`);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

interface LeadsReply {
  leads: unknown[];
  nextCursor: string | null;
  total: { count: number; exact: boolean };
}

async function getLeads(options: LeadsOptions, query: string): Promise<{ serverMs: number; roundTripMs: number; body: LeadsReply }> {
  const started = performance.now();
  const response = await fetch(`${options.serviceUrl}/admin/v1/accounts/${options.license}/leads?${query}`, { headers: { authorization: `Bearer ${options.token}` } });
  const body = (await response.json()) as LeadsReply;
  const roundTripMs = performance.now() - started;
  if (response.status !== 200) throw new Error(`GET leads?${query} answered ${response.status}: ${JSON.stringify(body)}`);
  const timing = /app;dur=([\d.]+)/.exec(response.headers.get('server-timing') ?? '');
  if (!timing) throw new Error('the reply has no Server-Timing app;dur');
  return { serverMs: Number(timing[1]), roundTripMs, body };
}

/** The query string of the page `pages` pages after the first (following nextCursor). */
async function laterPage(options: LeadsOptions, query: string, pages: number): Promise<string> {
  let cursor: string | null = null;
  for (let i = 0; i < pages; i += 1) {
    const { body } = await getLeads(options, `${query}&limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    cursor = body.nextCursor;
    if (cursor === null) throw new Error(`leads?${query} has fewer than ${pages + 1} pages`);
  }
  return `${query}&cursor=${cursor ?? ''}`;
}

export async function measureLeads(options: LeadsOptions): Promise<LeadsRow[]> {
  const started = performance.now();
  say(`leads: filling one account with ${options.leads.toLocaleString('en-US')} leads and another with ${Math.floor(options.leads / 10).toLocaleString('en-US')}`);
  await fillLeads(options.db, options.otherAccountId, Math.floor(options.leads / 10), 2, 11);
  await fillLeads(options.db, options.accountId, options.leads, 1, 11);
  // As autovacuum would have done on an older table: planner statistics and the visibility map.
  await options.db.query('VACUUM ANALYZE leads');
  say(`leads: filled in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const someLead = knownLead(options.leads - 1001);
  const queries: [string, string][] = [
    ['list, first page', 'limit=50'],
    ['list, after 2,000 leads (cursor)', await laterPage(options, 'q=', 4)],
    ['kind=known, first page', 'kind=known'],
    ['kind=anonymous, first page', 'kind=anonymous'],
    ['kind=anonymous, after 2,000 (cursor)', await laterPage(options, 'kind=anonymous', 4)],
    ['q, 1 character (a)', 'q=a'],
    ['q, 2 characters (jo)', 'q=jo'],
    ['q, 2 characters, rare (zq: none)', 'q=zq'],
    ['q, common (gmail)', 'q=gmail'],
    ['q, most (.com)', 'q=.com'],
    [`q, rare (${rareLastName}: a handful)`, `q=${rareLastName.toLowerCase()}`],
    ['q, rare, kind=known', `q=${rareLastName.toLowerCase()}&kind=known`],
    ['q, email', `q=${encodeURIComponent(someLead.email)}`],
    ['q, userId', `q=${someLead.userId}`],
    ['q, common, after 1,000 (cursor)', await laterPage(options, 'q=gmail', 2)],
    ['attribute, common (plan=pro: a third)', 'attribute=plan&value=pro'],
    ['attribute, 1 in 1,000 (cohort=c421)', 'attribute=cohort&value=c421'],
    ['attribute, none (plan=gold)', 'attribute=plan&value=gold'],
    ['attribute, common, kind=anonymous (none)', 'attribute=plan&value=pro&kind=anonymous'],
    [`attribute and q, rare (${rareLastName}, plan=team)`, `attribute=plan&value=team&q=${rareLastName.toLowerCase()}`],
    ['attribute, common, after 1,000 (cursor)', await laterPage(options, 'attribute=plan&value=pro', 2)],
  ];
  const rows: LeadsRow[] = [];
  for (const [name, query] of queries) {
    const server: number[] = [];
    const roundTrip: number[] = [];
    let count = 0;
    let total = '';
    // One request not measured: the first of a shape pays for its plan cache and buffers.
    await getLeads(options, query);
    for (let i = 0; i < options.requests; i += 1) {
      const reply = await getLeads(options, query);
      server.push(reply.serverMs);
      roundTrip.push(reply.roundTripMs);
      count = reply.body.leads.length;
      total = `${reply.body.total.exact ? '' : 'about '}${reply.body.total.count.toLocaleString('en-US')}`;
    }
    server.sort((a, b) => a - b);
    roundTrip.sort((a, b) => a - b);
    rows.push({ query: name, path: `leads?${query.slice(0, 60)}`, rows: count, total, p50Ms: percentile(server, 50), p99Ms: percentile(server, 99), roundTripP50Ms: percentile(roundTrip, 50) });
  }
  return rows;
}

export function printLeads(rows: LeadsRow[], leads: number, requests: number): void {
  console.log(`\nleads: GET /admin/v1/accounts/<license>/leads on an account of ${leads.toLocaleString('en-US')} leads, ${requests} requests each, one at a time`);
  const header = ['query', 'leads in reply', 'total', 'server p50 ms', 'server p99 ms', `within ${leadsLimitMs} ms`, 'round trip p50 ms'];
  console.log(
    table(
      header,
      rows.map((r) => [r.query, String(r.rows), r.total, r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), r.p99Ms <= leadsLimitMs ? 'yes' : 'NO', r.roundTripP50Ms.toFixed(1)]),
    ),
  );
  console.log('(server time: the reply\'s Server-Timing app;dur, from the read router to the reply; a term of 1 or 2 characters that few leads match has no trigram to look up: its reply walks at most 50,000 leads and gives a cursor to go on)');
}

/** The leads group, on a data directory of its own, beside the service with PROJECTIONS=off. */
export async function leadsGroup(dataDir: string, adminToken: string, children: Child[], leads: number, requests: number): Promise<LeadsRow[]> {
  setPhase('leads');
  const service = await startService('service (leads)', dataDir, adminToken, children, { projections: false });
  const db = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 1 });
  db.on('error', () => undefined);
  try {
    const [account, other] = [await createAccount(service.url, adminToken, 'Leads'), await createAccount(service.url, adminToken, 'Other')];
    const idOf = async (license: string): Promise<string> =>
      (await db.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [license])).rows[0]?.id ?? '';
    const common = { serviceUrl: service.url, license: account.licenseCode, token: account.accessToken, leads, requests, db };
    return await measureLeads({ ...common, accountId: await idOf(account.licenseCode), otherAccountId: await idOf(other.licenseCode) });
  } finally {
    await db.end();
    await stopService(service);
  }
}
