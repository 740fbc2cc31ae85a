import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { settleMs } from '../src/erasure/runner.js';
import { knownPersonEventBody, knownPersonsBulkBodies, queued } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { coresBetween, cpuSnapshot, type Target } from './load.js';
import { caughtUp } from './progress.js';
import { storeUrl } from './projections.js';
import type { Row } from './report.js';
import { setPhase, watchRss } from './rss.js';
import { createAccount, postAll, startService, stopService, type Account } from './service.js';
import { say, settings } from './settings.js';
import { quantile } from './visibility.js';

/*
 * An erasure under load: the service as `npm start` runs it (projections in a thread of its
 * process). Account A holds one person of BENCH_ERASURE_EVENTS (10,000) events, posted in bulk of
 * 100, and a profile with an email, all projected; account B takes single events over 1,000 known
 * persons on BENCH_ERASURE_CONNECTIONS (16) connections without pause: a warm-up, a window of
 * BENCH_ERASURE_BEFORE (8) seconds, then the erasure of A's person, from its POST until GET
 * answers it done (the fixed wait, the rebuild of A's read models, VACUUM). Measured: the erasure's
 * time and counts, B's req/s and p99 before and during it (and during the part after the wait),
 * the service's peak resident memory in each window.
 */

export const erasedUserId = 'bench-erased';
const bystanderPersons = 1_000;
const pollMs = 100;

/** B's responses in one window of its load. */
export interface LoadWindow {
  label: string;
  seconds: number;
  responses: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses of the window not 2xx. */
  failed: number;
  /** Responses in the window's slowest whole second. */
  lowestSecond: number;
}

export interface ErasureResult {
  events: number;
  postSeconds: number;
  /** From the last post until all of A's events were in the read models. */
  projectedSeconds: number;
  state: string;
  /** From the POST sent until a GET answered it done or failed (polled every 100 ms). */
  seconds: number;
  /** doneAt - requestedAt, as the service recorded them. */
  serviceSeconds: number | null;
  counts: Record<string, number> | null;
  error: string | null;
  /** GET leads/<erased> before the erasure (200) and after it (404). */
  leadBefore: number;
  leadAfter: number;
  before: LoadWindow;
  during: LoadWindow;
  /** From the POST plus the erasure's fixed wait until done: the rebuild and VACUUM. */
  afterWait: LoadWindow;
  /** B's failed responses and connection errors over its whole load, warm-up included. */
  failedResponses: number;
  rssBeforeBytes: number | null;
  rssDuringBytes: number | null;
  cpuBefore: Row['cpuCores'];
  cpuDuring: Row['cpuCores'];
}

/** A promise settled by end(): the end of a window whose resident memory is sampled. */
function ended(): { promise: Promise<void>; end: () => void } {
  let end = (): void => undefined;
  const promise = new Promise<void>((resolve) => (end = resolve));
  return { promise, end };
}

interface Samples {
  at: number[];
  ms: number[];
  failedAt: number[];
}

/** B's load until stopped (or `seconds`): the time, latency and status of every response. */
function steadyLoad(url: string, account: Account, connections: number, seconds: number): { samples: Samples; stop: () => void; done: Promise<autocannon.Result> } {
  const samples: Samples = { at: [], ms: [], failedAt: [] };
  const body = knownPersonEventBody('bystander', bystanderPersons);
  let n = 0;
  let stop = (): void => undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${url}/v1/accounts/${account.licenseCode}/events`,
        connections,
        duration: seconds,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${account.accessToken}` },
        requests: [{ setupRequest: (request) => ({ ...request, body: body(n++) }) }],
        verifyBody: (reply) => queued(reply === undefined ? '' : reply.toString()),
      },
      (error: unknown, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      const at = performance.now();
      if (statusCode >= 200 && statusCode < 300) {
        samples.at.push(at);
        samples.ms.push(responseTime);
      } else samples.failedAt.push(at);
    });
    let stopped = false;
    stop = () => {
      if (!stopped) instance.stop();
      stopped = true;
    };
    interrupted.addEventListener('abort', stop, { once: true });
    instance.once('done', () => {
      stopped = true;
      interrupted.removeEventListener('abort', stop);
    });
  });
  return { samples, stop: () => stop(), done };
}

export function windowOf(label: string, samples: Samples, from: number, to: number): LoadWindow {
  const ms: number[] = [];
  const seconds = Math.max(0, (to - from) / 1000);
  const perSecond = new Array<number>(Math.floor(seconds)).fill(0);
  samples.at.forEach((at, i) => {
    if (at < from || at >= to) return;
    ms.push(samples.ms[i] as number);
    const second = Math.floor((at - from) / 1000);
    if (second < perSecond.length) perSecond[second] = (perSecond[second] as number) + 1;
  });
  return {
    label,
    seconds,
    responses: ms.length,
    reqPerSec: seconds > 0 ? ms.length / seconds : NaN,
    p50Ms: quantile(ms, 0.5),
    p99Ms: quantile(ms, 0.99),
    failed: samples.failedAt.filter((at) => at >= from && at < to).length,
    lowestSecond: perSecond.length ? Math.min(...perSecond) : NaN,
  };
}

/** A's events: bulkSize items a request, every one of the erased person. */
function erasedBodies(events: number): string[] {
  const requests = Math.ceil(events / settings.bulkSize);
  const start = Date.UTC(2024, 4, 1);
  return Array.from({ length: requests }, (_, r) =>
    JSON.stringify(
      Array.from({ length: Math.min(settings.bulkSize, events - r * settings.bulkSize) }, (_, i) => {
        const k = r * settings.bulkSize + i;
        return {
          userId: erasedUserId,
          eventName: ['page_view', 'search', 'add_to_cart'][k % 3],
          eventTime: new Date(start + k * 1000).toISOString(),
          eventData: { page: `/products/${k % 300}`, query: `running shoes ${k % 40}`, referrer: 'newsletter', value: 19.99 },
        };
      }),
    ),
  );
}

async function leadStatus(url: string, account: Account): Promise<number> {
  const response = await fetch(`${url}/admin/v1/accounts/${account.licenseCode}/leads/${erasedUserId}`, { headers: { authorization: `Bearer ${account.accessToken}` } });
  await response.arrayBuffer();
  return response.status;
}

interface ErasureReply {
  id?: string;
  state?: string;
  requestedAt?: string;
  doneAt?: string | null;
  counts?: Record<string, number> | null;
  error?: string | null;
}

async function erasureCall(url: string, account: Account, init: { method: string; body?: string }, path = ''): Promise<ErasureReply> {
  const response = await fetch(`${url}/v1/accounts/${account.licenseCode}/erasures${path}`, {
    ...init,
    headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
  });
  const reply = (await response.json()) as ErasureReply;
  if (!response.ok) throw new Error(`${init.method} erasures${path} answered ${response.status}: ${JSON.stringify(reply)}`);
  return reply;
}

async function waitProjected(db: pg.Pool): Promise<void> {
  const started = performance.now();
  while (!(await caughtUp(db))) {
    interrupted.throwIfAborted();
    if (performance.now() - started > settings.projectionLimitSeconds * 1000) throw new Error(`the erased person's events were not projected within ${settings.projectionLimitSeconds} s`);
    await sleep(50);
  }
}

export async function erasureGroup(dataDir: string, adminToken: string, children: Child[]): Promise<ErasureResult> {
  setPhase('erasure: start');
  const service = await startService('service (erasure, npm start)', dataDir, adminToken, children);
  const db = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 1 });
  db.on('error', () => undefined);
  try {
    const [erased, bystander] = [await createAccount(service.url, adminToken, 'Erasure'), await createAccount(service.url, adminToken, 'Erasure bystander')];
    const base = `${service.url}/v1/accounts/${erased.licenseCode}`;
    setPhase('erasure: fill');
    say(`erasure: posting ${settings.erasureEvents.toLocaleString('en-US')} events of one person in bulk of ${settings.bulkSize}`);
    const profile = JSON.stringify({ userId: erasedUserId, firstName: 'Erin', lastName: 'Erased', email: 'erin.erased@example.com', city: 'Lisbon', attributes: { membership_level: 'pro' } });
    const posting = performance.now();
    await postAll(`${base}/users`, erased.accessToken, [profile], 1);
    await postAll(`${base}/events/bulk`, erased.accessToken, erasedBodies(settings.erasureEvents), 4);
    const posted = performance.now();
    await waitProjected(db);
    const projected = performance.now();
    const leadBefore = await leadStatus(service.url, erased);
    await postAll(`${service.url}/v1/accounts/${bystander.licenseCode}/events/bulk`, bystander.accessToken, knownPersonsBulkBodies('bystander', bystanderPersons, settings.bulkSize), 4);

    const target: Target = { url: service.url, headers: {}, child: service.child, worker: null, pgPid: await postmasterPid(dataDir), store: null };
    const pid = service.child.process.pid ?? 0;
    setPhase('erasure: bystander before');
    say(`erasure: the bystander's ingest alone (${settings.warmupSeconds} s warm-up, ${settings.erasureBeforeSeconds} s measured)`);
    const load = steadyLoad(service.url, bystander, settings.erasureConnections, settings.warmupSeconds + settings.erasureBeforeSeconds + settings.projectionLimitSeconds + 10);
    try {
      await sleep(settings.warmupSeconds * 1000);
      const beforeFrom = performance.now();
      const cpu0 = await cpuSnapshot(target);
      const beforeEnd = ended();
      const rssBefore = watchRss(pid, beforeEnd.promise);
      await sleep(settings.erasureBeforeSeconds * 1000);
      interrupted.throwIfAborted();
      beforeEnd.end();
      const cpu1 = await cpuSnapshot(target);
      const requestedAt = performance.now();
      setPhase('erasure: erasing');
      const duringEnd = ended();
      const rssDuring = watchRss(pid, duringEnd.promise);
      say(`erasure: erasing the person while the bystander posts (limit ${settings.projectionLimitSeconds} s)`);
      const { id } = await erasureCall(service.url, erased, { method: 'POST', body: JSON.stringify({ userId: erasedUserId }) });
      let reply: ErasureReply = { state: 'pending' };
      while (reply.state === 'pending' && performance.now() - requestedAt < settings.projectionLimitSeconds * 1000) {
        interrupted.throwIfAborted();
        await sleep(pollMs);
        reply = await erasureCall(service.url, erased, { method: 'GET' }, `/${id ?? ''}`);
      }
      const doneAt = performance.now();
      const cpu2 = await cpuSnapshot(target);
      duringEnd.end();
      load.stop();
      const result = await load.done;
      const serviceSeconds = reply.doneAt && reply.requestedAt ? (Date.parse(reply.doneAt) - Date.parse(reply.requestedAt)) / 1000 : null;
      return {
        events: settings.erasureEvents,
        postSeconds: (posted - posting) / 1000,
        projectedSeconds: (projected - posted) / 1000,
        state: reply.state === 'pending' ? `pending after ${settings.projectionLimitSeconds} s` : (reply.state ?? 'unknown'),
        seconds: (doneAt - requestedAt) / 1000,
        serviceSeconds,
        counts: reply.counts ?? null,
        error: reply.error ?? null,
        leadBefore,
        leadAfter: await leadStatus(service.url, erased),
        before: windowOf('before', load.samples, beforeFrom, requestedAt),
        during: windowOf('during the erasure', load.samples, requestedAt, doneAt),
        afterWait: windowOf(`after its ${settleMs / 1000} s wait`, load.samples, requestedAt + settleMs, doneAt),
        failedResponses: load.samples.failedAt.length + result.errors + Math.max(0, result.mismatches - result.non2xx),
        rssBeforeBytes: rssBefore.maxBytes,
        rssDuringBytes: rssDuring.maxBytes,
        cpuBefore: coresBetween(cpu0, cpu1, (requestedAt - beforeFrom) / 1000),
        cpuDuring: coresBetween(cpu1, cpu2, (doneAt - requestedAt) / 1000),
      };
    } finally {
      load.stop();
      await load.done.catch(() => undefined);
    }
  } finally {
    await db.end();
    await stopService(service);
  }
}
