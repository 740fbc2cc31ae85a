import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';

/**
 * The probe of the visibility scenario, in a worker thread so that the load generator's event loop
 * never delays its clock: every 20-50 ms it posts a fresh user and, once the POST is answered, asks
 * for the lead every 5-10 ms until it is there (200). The sample is the time from the POST's answer
 * to the first 200. Sends one ProbeResult to the parent when done: after `seconds` (or `count`
 * probes), or sooner when the parent sends 'stop'. With `oneAtATime`, each probe is posted `gapMs`
 * after the one before became visible: nothing else in flight, the service idle in between.
 */

export interface ProbeSettings {
  serviceUrl: string;
  license: string;
  token: string;
  runId: string;
  seconds: number;
  gapMs: [number, number];
  pollMs: [number, number];
  /** A lead not visible this long after its POST is counted as not visible. */
  giveUpMs: number;
  /** Probes sent at most (none: as many as `seconds` allows). */
  count?: number;
  /** Each probe waits for the one before to be visible (or given up), then `gapMs`. */
  oneAtATime?: boolean;
  /** Probes sent first and left out of the result: the service's caches and JIT warm. */
  warmup?: number;
}

export interface ProbeResult {
  /** ms from POST answered to lead visible, one per probe that became visible. */
  visibleMs: number[];
  /** The same from the POST sent: what the user who posted waits, the POST's own latency included. */
  fromSentMs: number[];
  notVisible: number;
  /** POSTs not answered 200 queued, and GETs answered neither 200 nor 404. */
  failures: string[];
  /** GETs sent, 404s included. */
  polls: number;
  /** Round trips of the GETs, ms: the resolution of the samples. */
  getMs: number[];
  postMs: number[];
}

const settings = workerData as ProbeSettings;
const between = ([min, max]: [number, number]): number => min + Math.random() * (max - min);

const emptyResult = (): ProbeResult => ({ visibleMs: [], fromSentMs: [], notVisible: 0, failures: [], polls: 0, getMs: [], postMs: [] });
let result = emptyResult();
const headers = { authorization: `Bearer ${settings.token}`, 'content-type': 'application/json' };
const base = settings.serviceUrl;

function fail(message: string): void {
  if (result.failures.length < 20) result.failures.push(message);
  else result.failures[19] = `${message} (and more)`;
}

async function probe(n: number): Promise<void> {
  const userId = `probe-${settings.runId}-${n}`;
  const body = JSON.stringify({ userId, firstName: 'Probe', lastName: `P${n}`, email: `probe${n}@example.com`, attributes: { membership_level: 'pro' } });
  const posted = performance.now();
  const post = await fetch(`${base}/v1/accounts/${settings.license}/users`, { method: 'POST', headers, body });
  const reply = await post.text();
  const answered = performance.now();
  result.postMs.push(answered - posted);
  if (post.status !== 200 || !reply.includes('"status":"queued"')) return fail(`POST users answered ${post.status}: ${reply.slice(0, 200)}`);
  for (;;) {
    const asked = performance.now();
    const get = await fetch(`${base}/admin/v1/accounts/${settings.license}/leads/${encodeURIComponent(userId)}`, { headers });
    const at = performance.now();
    await get.arrayBuffer();
    result.polls += 1;
    result.getMs.push(at - asked);
    if (get.status === 200) {
      result.visibleMs.push(at - answered);
      result.fromSentMs.push(at - posted);
      return;
    }
    if (get.status !== 404) return fail(`GET leads/:id answered ${get.status}`);
    if (at - answered > settings.giveUpMs) {
      result.notVisible += 1;
      return;
    }
    await sleep(between(settings.pollMs));
  }
}

const inFlight = new Set<Promise<void>>();
let until = performance.now() + settings.seconds * 1000;
parentPort?.on('message', (message: unknown) => {
  if (message === 'stop') until = 0;
});
// The probe's own timers keep the thread alive; the port must not once they are done.
parentPort?.unref();
const warmup = settings.warmup ?? 0;
for (let n = 0; n < warmup && performance.now() < until; n += 1) {
  await probe(n).catch((error: unknown) => fail(`warm-up probe ${n}: ${String(error)}`));
  await sleep(between(settings.gapMs));
}
// What the warm-up saw is not measured; its failures are kept.
result = { ...emptyResult(), failures: result.failures };
const count = warmup + (settings.count ?? Infinity);
for (let n = warmup; n < count && performance.now() < until; n += 1) {
  const p = probe(n).catch((error: unknown) => fail(`probe ${n}: ${String(error)}`));
  inFlight.add(p);
  void p.finally(() => inFlight.delete(p));
  if (settings.oneAtATime) await p;
  await sleep(between(settings.gapMs));
}
await Promise.all(inFlight);
parentPort?.postMessage(result);
