import { gzipSync } from 'node:zlib';
import { maxItemContainers, maxItemValues } from '../src/ingest/item-size.js';
import type { Child } from './children.js';
import { table } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, stopService, type Account } from './service.js';
import { say, settings } from './settings.js';

/**
 * The hostile group: the service as `npm start` runs it (its 256 MiB heap), attacked by two
 * accounts (bodies that parse into millions of objects; large stored events read back), while a
 * third posts single events. Each case reports the peaks of the heap and of the
 * resident memory (sampled from /metrics every 100 ms), the replies by status, and the third
 * account's latency, against the same account's latency with nothing else running (the baseline).
 * A case whose heap passes its limit, or where the process dies, fails the bench.
 */

export interface HostileRow {
  scenario: string;
  seconds: number;
  statuses: Record<string, number>;
  heapUsedMiB: number;
  heapTotalMiB: number;
  rssMiB: number;
  bystanderP50Ms: number;
  bystanderP99Ms: number;
  bystanderFailed: number;
  alive: boolean;
  detail: string;
}

/**
 * What one case does to the service: `prepare` before the measured window (planting data), `run`
 * for its duration, the bystander beside it; `run` may return a detail for the report.
 */
export interface Attack {
  prepare?: (base: string, attackers: Account[]) => Promise<void>;
  run: (base: string, attackers: Account[], until: number, note: (status: string) => void) => Promise<string | void>;
}

const heapLimitMiB = 256;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const gauge = (page: string, name: string): number => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(page)?.[1] ?? 0);

/** Bulk events, gzipped: 100 items each holding `arrays` empty arrays and `numbers` zeros. */
function wideBulk(arrays: number, numbers: number): Buffer {
  const item = (i: number) => `{"userId":"u${i}","eventName":"wide","eventData":{"a":[${Array(arrays).fill('[]').join(',')}],"n":[${Array(numbers).fill('0').join(',')}]}}`;
  return gzipSync(`[${Array.from({ length: 100 }, (_, i) => item(i)).join(',')}]`);
}

const post = (base: string, account: Account, path: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<number> =>
  fetch(`${base}/v1/accounts/${account.licenseCode}/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json', ...headers },
    body,
  }).then(
    async (r) => {
      await r.arrayBuffer();
      return r.status;
    },
    () => 0,
  );

/** 5 MB of `[],` per request (1.7 million arrays parsed), and the widest bodies the item limits allow, 3 of each per account at a time. */
export const wideJson: Attack = {
  run: async (base, attackers, until, note) => {
    const pastTheLimits = wideBulk(17_000, 0);
    const atTheLimits = wideBulk(maxItemContainers - 4, maxItemValues - 2_000);
    const loop = async (account: Account, kind: string, body: Buffer) => {
      while (Date.now() < until) note(`${kind} ${await post(base, account, 'events/bulk', body, { 'content-encoding': 'gzip' })}`);
    };
    await Promise.all(attackers.flatMap((account) => [0, 1, 2].flatMap(() => [loop(account, 'past limits', pastTheLimits), loop(account, 'at limits', atTheLimits)])));
  },
};

/**
 * Large replies: the first attacker's ingest token stores 100 events of 1 MB in one user's stream
 * (before the window); then the attackers read them, 12 at a time (track lookup of the last event,
 * the lead's events and timeline at limit 500). Each reply is a page of at most 1 MiB, payloads
 * over 4 KiB truncated (docs/api.md).
 */
export function largeReplies(): Attack {
  let lastTrackId = '';
  return {
    prepare: async (base, [account]) => {
      if (!account) return;
      const blob = 'x'.repeat(1_000_000);
      await post(base, account, 'users', JSON.stringify({ userId: 'big', attributes: {} }));
      for (let i = 0; i < 100; i += 1) await post(base, account, 'events', JSON.stringify({ userId: 'big', eventName: 'large', eventData: { blob, i } }));
      const reply = await fetch(`${base}/v1/accounts/${account.licenseCode}/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'big', eventName: 'last', eventData: {} }),
      });
      lastTrackId = ((await reply.json()) as { response: { trackID: string } }).response.trackID;
      for (let i = 0; i < 1200 && (await read(base, account, `track/${lastTrackId}`)).status !== 200; i += 1) await sleep(100);
    },
    run: async (base, [account], until, note) => {
      if (!account) return;
      const paths = [`track/${lastTrackId}`, 'leads/big/events?limit=500', 'leads/big/timeline?limit=500'];
      let largest = 0;
      while (Date.now() < until) {
        const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => read(base, account, paths[i % paths.length] as string)));
        for (const reply of replies) {
          note(`read ${reply.status}`);
          largest = Math.max(largest, reply.bytes);
        }
      }
      return `largest reply ${(largest / 1024).toFixed(0)} KiB`;
    },
  };
}

async function read(base: string, account: Account, path: string): Promise<{ status: number; bytes: number }> {
  const response = await fetch(`${base}/admin/v1/accounts/${account.licenseCode}/${path}`, { headers: { authorization: `Bearer ${account.accessToken}` } }).catch(() => null);
  return response ? { status: response.status, bytes: (await response.arrayBuffer()).byteLength } : { status: 0, bytes: 0 };
}

async function runCase(scenario: string, base: string, attackers: Account[], bystander: Account, attack: Attack | null, child: Child): Promise<HostileRow> {
  say(`hostile: ${scenario}`);
  setPhase(`hostile: ${scenario} (preparing)`);
  await attack?.prepare?.(base, attackers);
  setPhase(`hostile: ${scenario}`);
  const seconds = settings.durationSeconds;
  const until = Date.now() + seconds * 1000;
  const statuses: Record<string, number> = {};
  const note = (status: string) => void (statuses[status] = (statuses[status] ?? 0) + 1);
  const peaks = { heapUsed: 0, heapTotal: 0, rss: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const page = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
      peaks.heapUsed = Math.max(peaks.heapUsed, gauge(page, 'nodejs_heap_size_used_bytes'));
      peaks.heapTotal = Math.max(peaks.heapTotal, gauge(page, 'nodejs_heap_size_total_bytes'));
      peaks.rss = Math.max(peaks.rss, gauge(page, 'process_resident_memory_bytes'));
      await sleep(100);
    }
  })();
  const latencies: number[] = [];
  let bystanderFailed = 0;
  const bystanderLoop = async () => {
    for (let i = 0; Date.now() < until; i += 1) {
      const started = performance.now();
      const status = await post(base, bystander, 'events', JSON.stringify({ userId: 'bystander', eventName: 'still here', eventData: { i } }));
      if (status === 200) latencies.push(performance.now() - started);
      else bystanderFailed += 1;
    }
  };
  const [detail] = await Promise.all([attack ? attack.run(base, attackers, until, note) : Promise.resolve(), bystanderLoop()]);
  sampling = false;
  await sampler;
  const sorted = latencies.sort((a, b) => a - b);
  const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
  return {
    scenario,
    seconds,
    statuses,
    heapUsedMiB: mib(peaks.heapUsed),
    heapTotalMiB: mib(peaks.heapTotal),
    rssMiB: mib(peaks.rss),
    bystanderP50Ms: percentile(sorted, 0.5),
    bystanderP99Ms: percentile(sorted, 0.99),
    bystanderFailed,
    alive: child.process.exitCode === null && child.process.signalCode === null,
    detail: detail ?? '',
  };
}

/** The group, on a data directory of its own: the baseline, then each attack in `attacks`. */
export async function hostileGroup(dataDir: string, adminToken: string, children: Child[], attacks: Record<string, Attack>): Promise<HostileRow[]> {
  const service = await startService('service (hostile)', dataDir, adminToken, children);
  try {
    const [a, b, bystander] = [await createAccount(service.url, adminToken, 'attacker A'), await createAccount(service.url, adminToken, 'attacker B'), await createAccount(service.url, adminToken, 'bystander')];
    const rows = [await runCase('bystander alone', service.url, [a, b], bystander, null, service.child)];
    for (const [name, attack] of Object.entries(attacks)) {
      const row = await runCase(name, service.url, [a, b], bystander, attack, service.child);
      rows.push(row);
      if (!row.alive) break;
    }
    return rows;
  } finally {
    await stopService(service);
  }
}

/** Prints the group; true when a case failed (the process died, or its heap passed the limit). */
export function printHostile(rows: HostileRow[]): boolean {
  console.log(`\nhostile: two accounts attack the service as npm start runs it (heap limit ${heapLimitMiB} MiB), a third posts single events`);
  const fixed = (n: number) => n.toFixed(1);
  console.log(table(
    ['scenario', 's', 'heap used MiB', 'heap total MiB', 'RSS MiB', 'bystander p50 ms', 'bystander p99 ms', 'bystander failed', 'alive', 'replies (kind status: count)'],
    rows.map((r) => [
      r.scenario,
      String(r.seconds),
      String(r.heapUsedMiB),
      String(r.heapTotalMiB),
      String(r.rssMiB),
      fixed(r.bystanderP50Ms),
      fixed(r.bystanderP99Ms),
      String(r.bystanderFailed),
      r.alive ? 'yes' : 'NO',
      [...Object.entries(r.statuses).map(([k, v]) => `${k}: ${v}`), ...(r.detail ? [r.detail] : [])].join(', '),
    ]),
  ));
  const bad = rows.filter((r) => !r.alive || r.heapTotalMiB > heapLimitMiB + 16 || r.bystanderFailed > 0 || Object.keys(r.statuses).some((k) => k.startsWith('read ') && k !== 'read 200'));
  for (const r of bad) console.log(`FAILED in hostile ${r.scenario}: ${r.alive ? '' : 'the service died; '}heap total ${r.heapTotalMiB} MiB, ${r.bystanderFailed} bystander posts failed`);
  return bad.length > 0;
}
