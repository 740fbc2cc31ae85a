import { allQueued, bulkBodies, eventBody, queued } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { measure, type Scenario, type Target } from './load.js';
import { table, type Row, type TargetLine } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, stopService } from './service.js';
import { median } from './sealing.js';
import { say, settings } from './settings.js';

/*
 * What a browser key costs the ingest path against an access token (docs/browser.md): a page's
 * request (`?key=`, an `Origin` to check, a text/plain body) against a server's (Authorization
 * header, JSON), on one service with PROJECTIONS=off. The limit per address is off (autocannon
 * is one address); the limit per key is on, far above the load, so its count in PostgreSQL is paid
 * as in production. BENCH_BROWSER_ROUNDS (3) rounds, the order flipped every round.
 */

const origin = 'https://shop.example.com';
const goal = 0.8;

export interface BrowserSummary {
  scenario: string;
  keyReqPerSec: number;
  tokenReqPerSec: number;
  keyItemsPerSec: number;
  ratio: number;
  roundRatios: number[];
  keyP99Ms: number;
  tokenP99Ms: number;
}

export interface BrowserResult {
  rounds: number;
  rows: { round: number; credential: 'browser key' | 'access token'; row: Row }[];
  summary: BrowserSummary[];
}

const scenarioNames = ['events single', `events bulk x${settings.bulkSize}`];

function scenarios(license: string, config: string, query: string): Scenario[] {
  const base = `/v1/accounts/${license}/events`;
  return [
    { name: scenarioNames[0] as string, config, path: `${base}${query}`, items: 1, bulkKind: null, body: eventBody, verify: queued },
    { name: scenarioNames[1] as string, config, path: `${base}/bulk${query}`, items: settings.bulkSize, bulkKind: 'events', body: bulkBodies('events', settings.bulkSize), verify: allQueued },
  ];
}

export async function browserGroup(dataDir: string, adminToken: string, children: Child[]): Promise<BrowserResult> {
  setPhase('browser: start');
  const env = { BROWSER_ADDRESS_RATE_LIMIT: '0', BROWSER_KEY_RATE_LIMIT: '1000000000' };
  const service = await startService('service (browser keys)', dataDir, adminToken, children, { projections: false, env });
  const rows: BrowserResult['rows'] = [];
  try {
    const account = await createAccount(service.url, adminToken, 'Browser');
    const made = await fetch(`${service.url}/admin/v1/accounts/${account.licenseCode}/browser-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'bench', origins: [origin] }),
    });
    const { browserKey } = (await made.json()) as { browserKey: string };
    const pgPid = await postmasterPid(dataDir);
    const base = { url: service.url, child: service.child, worker: null, pgPid, store: null };
    const targets = {
      'browser key': { ...base, headers: { 'content-type': 'text/plain;charset=UTF-8', origin } } satisfies Target,
      'access token': { ...base, headers: { 'content-type': 'application/json', authorization: `Bearer ${account.accessToken}` } } satisfies Target,
    };
    for (let round = 1; round <= settings.browserRounds; round++) {
      const order = round % 2 === 1 ? (['browser key', 'access token'] as const) : (['access token', 'browser key'] as const);
      for (const credential of order) {
        const query = credential === 'browser key' ? `?key=${browserKey}` : '';
        for (const scenario of scenarios(account.licenseCode, `PROJECTIONS=off, ${credential}`, query)) {
          interrupted.throwIfAborted();
          say(`browser round ${round}: ${scenario.name} with ${credential}`);
          rows.push({ round, credential, row: await measure(scenario, targets[credential]) });
        }
      }
    }
  } finally {
    await stopService(service);
  }
  const summary = scenarioNames.map((scenario): BrowserSummary => {
    const of = (credential: string): Row[] => rows.filter((r) => r.credential === credential && r.row.scenario === scenario).map((r) => r.row);
    const [key, token] = [of('browser key'), of('access token')];
    const rate = (list: Row[]): number => median(list.map((r) => r.reqPerSec));
    const roundRatios = key.flatMap((row, i) => (token[i] ? [row.reqPerSec / (token[i] as Row).reqPerSec] : []));
    return {
      scenario,
      keyReqPerSec: rate(key),
      tokenReqPerSec: rate(token),
      keyItemsPerSec: median(key.map((r) => r.itemsPerSec)),
      ratio: rate(key) / rate(token),
      roundRatios,
      keyP99Ms: median(key.map((r) => r.p99Ms)),
      tokenP99Ms: median(token.map((r) => r.p99Ms)),
    };
  });
  return { rounds: settings.browserRounds, rows, summary };
}

const whole = (value: number): string => (Number.isNaN(value) ? '-' : Math.round(value).toLocaleString('en-US'));

/** Prints every run and the medians; returns true when a response failed. */
export function printBrowser(result: BrowserResult): boolean {
  console.log(`\nbrowser keys: a page's request (?key=, Origin, text/plain) against a server's (access token, JSON); PROJECTIONS=off, ${result.rounds} rounds`);
  const header = ['scenario', 'round', 'credential', 'req/s', 'items/s', 'p50 ms', 'p99 ms', 'failed', 'CPU node', 'CPU pg', 'CPU other'];
  console.log(
    table(
      header,
      result.rows.map(({ round, credential, row: r }) => [
        r.scenario,
        String(round),
        credential,
        whole(r.reqPerSec),
        whole(r.itemsPerSec),
        r.p50Ms.toFixed(1),
        r.p99Ms.toFixed(1),
        String(r.notQueued + r.errors),
        (r.cpuCores.node ?? 0).toFixed(2),
        (r.cpuCores.postgres ?? 0).toFixed(2),
        (r.cpuCores.other ?? 0).toFixed(2),
      ]),
    ),
  );
  const summaryHeader = ['scenario', 'req/s key', 'req/s token', 'key / token', 'each round', 'p99 ms key', 'p99 ms token'];
  console.log(
    table(
      summaryHeader,
      result.summary.map((s) => [s.scenario, whole(s.keyReqPerSec), whole(s.tokenReqPerSec), s.ratio.toFixed(2), s.roundRatios.map((r) => r.toFixed(2)).join(' '), s.keyP99Ms.toFixed(1), s.tokenP99Ms.toFixed(1)]),
    ),
  );
  const bad = result.rows.map((r) => r.row).filter((r) => r.notQueued > 0 || r.errors > 0);
  for (const r of bad) console.log(`FAILED RESPONSES in ${r.scenario} (${r.config}): ${r.non2xx} non-2xx, ${r.notQueued} not queued, ${r.errors} errors`);
  return bad.length > 0;
}

export function browserTargetLines(result: BrowserResult): TargetLine[] {
  return result.summary.map((s) => ({
    target: `${s.scenario} with a browser key, against an access token, PROJECTIONS=off`,
    measured: `${whole(s.keyReqPerSec)} req/s${s.keyItemsPerSec === s.keyReqPerSec ? '' : `, ${whole(s.keyItemsPerSec)} items/s`} (median of ${result.rounds})`,
    ceiling: `access token ${whole(s.tokenReqPerSec)} req/s`,
    ratio: s.ratio,
    goal: `>= ${goal}`,
    met: s.ratio >= goal,
    otherCores: Math.max(...result.rows.filter((r) => r.row.scenario === s.scenario).map((r) => r.row.cpuCores.other ?? 0)),
  }));
}
