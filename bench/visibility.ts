import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import { eventBody, queued, userBody } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { machineBusySeconds, ownCpuSeconds, treeCpuSeconds } from './cpu.js';
import type { VisibilityRow } from './report.js';
import type { ProbeResult, ProbeSettings } from './visibility-probe.js';

/**
 * Read-your-writes under load: the service as `npm start` runs it (API and projection workers in
 * one process, PROJECTION_POLL_MS default) takes a steady ingest rate, alternately POST users and
 * POST events (autocannon overallRate), while a probe measures how long a fresh user takes, after
 * its POST is answered, to be served by GET leads/:id.
 */

export interface VisibilityOptions {
  serviceUrl: string;
  license: string;
  token: string;
  child: Child;
  pgPid: number | null;
  rate: number;
  warmupSeconds: number;
  seconds: number;
  storeEvents: number;
}

/** `rate` requests per second for `seconds`, alternately POST users and POST events. */
function steadyLoad(options: VisibilityOptions, seconds: number, counter: { n: number }): Promise<autocannon.Result> {
  const base = `/v1/accounts/${options.license}`;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${options.serviceUrl}${base}/users`,
        // Enough connections that none falls behind its share of the rate at the service's latency.
        connections: 32,
        overallRate: options.rate,
        duration: seconds,
        method: 'POST',
        headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => {
              const n = counter.n++;
              return n % 2 === 0 ? { ...request, path: `${base}/users`, body: userBody(n) } : { ...request, path: `${base}/events`, body: eventBody(n) };
            },
          },
        ],
        verifyBody: (reply) => queued(reply === undefined ? '' : reply.toString()),
      },
      (error: unknown, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result)),
    );
    const stop = (): void => instance.stop();
    interrupted.addEventListener('abort', stop, { once: true });
    instance.once('done', () => interrupted.removeEventListener('abort', stop));
  });
}

/** The probe in a thread of its own (visibility-probe.ts); `stop` ends it before its `seconds`. */
export function startProbe(settings: ProbeSettings): { result: Promise<ProbeResult>; stop: () => void } {
  const worker = new Worker(new URL('./visibility-probe.js', import.meta.url), { workerData: settings });
  const result = new Promise<ProbeResult>((resolve, reject) => {
    let reply: ProbeResult | null = null;
    worker.once('message', (message: ProbeResult) => (reply = message));
    worker.once('error', reject);
    worker.once('exit', (code) => (reply ? resolve(reply) : reject(new Error(`the probe thread exited (${code}) without a result`))));
    interrupted.addEventListener('abort', () => void worker.terminate(), { once: true });
  });
  return { result, stop: () => worker.postMessage('stop') };
}

/** The q-quantile (0..1) of unsorted samples, nearest rank; NaN when there are none. */
export function quantile(samples: number[], q: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

export async function measureVisibility(options: VisibilityOptions): Promise<VisibilityRow> {
  const counter = { n: 0 };
  if (options.warmupSeconds > 0) {
    process.stderr.write(`warming up visibility (${options.rate} req/s, ${options.warmupSeconds} s)\n`);
    await steadyLoad(options, options.warmupSeconds, counter);
  }
  interrupted.throwIfAborted();
  process.stderr.write(`measuring visibility (${options.rate} req/s of users and events, probe every 20-50 ms, ${options.seconds} s)\n`);
  const pid = options.child.process.pid;
  const cpu = async () => ({
    node: pid === undefined ? null : await ownCpuSeconds(pid),
    pg: options.pgPid === null ? null : await treeCpuSeconds(options.pgPid),
    gen: process.cpuUsage(),
    machine: await machineBusySeconds(),
  });
  const before = await cpu();
  const started = performance.now();
  const [load, probe] = await Promise.all([
    steadyLoad(options, options.seconds, counter),
    startProbe({
      serviceUrl: options.serviceUrl,
      license: options.license,
      token: options.token,
      runId: Date.now().toString(36),
      seconds: options.seconds,
      gapMs: [20, 50],
      pollMs: [5, 10],
      giveUpMs: 10_000,
    }).result,
  ]);
  // The load ends with the window; a probe still waiting for its lead may run on a little.
  const seconds = (performance.now() - started) / 1000;
  const after = await cpu();
  interrupted.throwIfAborted();
  const cores = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : (b - a) / seconds);
  const gen = process.cpuUsage(before.gen);
  const node = cores(before.node, after.node);
  const postgres = cores(before.pg, after.pg);
  const loadgen = (gen.user + gen.system) / 1e6 / seconds;
  const machine = cores(before.machine, after.machine);
  return {
    scenario: `lead visible after POST users, under ${options.rate} req/s`,
    storeEvents: options.storeEvents,
    probes: probe.visibleMs.length + probe.notVisible,
    p50Ms: quantile(probe.visibleMs, 0.5),
    p90Ms: quantile(probe.visibleMs, 0.9),
    p99Ms: quantile(probe.visibleMs, 0.99),
    maxMs: probe.visibleMs.length ? Math.max(...probe.visibleMs) : NaN,
    notVisible: probe.notVisible,
    probeFailures: probe.failures,
    getsPerProbe: probe.visibleMs.length ? probe.polls / (probe.visibleMs.length + probe.notVisible) : NaN,
    getP50Ms: quantile(probe.getMs, 0.5),
    postP50Ms: quantile(probe.postMs, 0.5),
    ingestReqPerSec: load.requests.mean,
    ingestP50Ms: load.latency.p50,
    ingestP99Ms: load.latency.p99,
    non2xx: load.non2xx,
    notQueued: load.mismatches,
    errors: load.errors,
    cpuCores: {
      node,
      postgres,
      loadgen,
      other: machine === null || node === null || postgres === null ? null : Math.max(0, machine - node - postgres - loadgen),
    },
  };
}
