import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import type pg from 'pg';
import type { BulkKind } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { machineBusySeconds, ownCpuSeconds, treeCpuSeconds } from './cpu.js';
import { caughtUp } from './progress.js';
import type { Row } from './report.js';
import { setPhase } from './rss.js';
import { say, settings } from './settings.js';

/** One autocannon scenario: a window of load on one endpoint, measured with the service's CPU and commits. */

export interface Scenario {
  name: string;
  /** How the service runs: 'PROJECTIONS=off', 'PROJECTIONS=off + worker', 'npm start'; 'baseline' for the hello-world. */
  config: string;
  path: string;
  items: number;
  /** The kind of a bulk scenario: its ceiling is the write ceiling of that kind's rows. */
  bulkKind: BulkKind | null;
  body: (n: number) => string;
  verify: (reply: string) => boolean;
  /** Connections of its load; BENCH_CONNECTIONS when absent. */
  connections?: number;
}

export interface Target {
  url: string;
  headers: Record<string, string>;
  child: Child;
  /** A projection worker process beside the service, whose CPU is counted apart. */
  worker: Child | null;
  /** The postmaster of the service's PostgreSQL; null for the baseline. */
  pgPid: number | null;
  /** A connection to the service's store, to wait for its projections; null when none run. */
  store: pg.Pool | null;
  /** Not the service (the naive peer): it has no group commit to report. */
  peer?: boolean;
}

export function load(target: Target, scenario: Scenario, seconds: number, counter: { n: number }, extra: Partial<autocannon.Options> = {}): Promise<autocannon.Result> {
  return new Promise((resolvePromise, reject) => {
    const instance = autocannon(
      {
        url: target.url + scenario.path,
        connections: scenario.connections ?? settings.connections,
        duration: seconds,
        method: 'POST',
        headers: target.headers,
        // One dynamic request: every request gets a fresh body, so ids (and streams) vary.
        requests: [{ setupRequest: (request) => ({ ...request, body: scenario.body(counter.n++) }) }],
        verifyBody: (reply) => scenario.verify(reply === undefined ? '' : reply.toString()),
        ...extra,
      },
      (error: unknown, result) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolvePromise(result)),
    );
    const stop = (): void => instance.stop();
    interrupted.addEventListener('abort', stop, { once: true });
    instance.once('done', () => interrupted.removeEventListener('abort', stop));
  });
}

/** Group commit counters of the service: how many events each transaction carried. */
async function commitStats(serviceUrl: string): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return { sum: value('tracking_eventstore_append_batch_events_sum'), count: value('tracking_eventstore_append_batch_events_count') };
}

export interface CpuSnapshot {
  node: number | null;
  worker: number | null;
  pg: number | null;
  gen: NodeJS.CpuUsage;
  machine: number | null;
}

export async function cpuSnapshot(target: Target): Promise<CpuSnapshot> {
  const own = async (child: Child | null): Promise<number | null> => (child?.process.pid === undefined ? null : ownCpuSeconds(child.process.pid));
  return {
    node: await own(target.child),
    worker: await own(target.worker),
    pg: target.pgPid === null ? null : await treeCpuSeconds(target.pgPid),
    gen: process.cpuUsage(),
    machine: await machineBusySeconds(),
  };
}

/** Cores used between two snapshots: the service, its worker, PostgreSQL, this process and the rest of the machine. */
export function coresBetween(before: CpuSnapshot, after: CpuSnapshot, seconds: number): Row['cpuCores'] {
  const cores = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : (b - a) / seconds);
  const gen = process.cpuUsage(before.gen);
  const node = cores(before.node, after.node);
  const worker = cores(before.worker, after.worker);
  const postgres = cores(before.pg, after.pg);
  const loadgen = (gen.user + gen.system) / 1e6 / seconds;
  const machine = cores(before.machine, after.machine);
  // The baseline has no PostgreSQL; the service's idle one is then part of the rest.
  const other = machine === null || node === null ? null : Math.max(0, machine - node - (worker ?? 0) - (postgres ?? 0) - loadgen);
  return { node, worker, postgres, loadgen, other };
}

/**
 * Waits until the projections (in the service or its worker) have applied every stored event (every
 * account's cursor of all four at its last event): the seconds that took, drained false past the limit.
 * A scenario would otherwise pay for the backlog the previous one left.
 */
export async function drain(store: pg.Pool | null, label: string): Promise<{ seconds: number; drained: boolean } | null> {
  if (!store) return null;
  const started = performance.now();
  let lastSaid = started;
  for (;;) {
    interrupted.throwIfAborted();
    // Read again each time: requests still in flight when the load stopped may append after it.
    const done = await caughtUp(store);
    const seconds = (performance.now() - started) / 1000;
    if (done) return { seconds, drained: true };
    if (seconds > settings.drainLimitSeconds) return { seconds, drained: false };
    if (performance.now() - lastSaid > 5_000) {
      lastSaid = performance.now();
      say(`  projections catching up after ${label} (${seconds.toFixed(0)} s)`);
    }
    await sleep(100);
  }
}

/** The seconds of a measure's warm-up and of its measured window. */
export interface MeasureWindow {
  warmupSeconds: number;
  durationSeconds: number;
}

/**
 * Warm-up, then the measured window, then the wait for the projections (if any run). The window is
 * BENCH_WARMUP and BENCH_DURATION unless a group gives its own.
 */
export async function measure(scenario: Scenario, target: Target, window: MeasureWindow = settings): Promise<Row> {
  const counter = { n: 0 };
  const label = `${scenario.name} (${scenario.config})`;
  setPhase(`ingest: ${label}`);
  if (window.warmupSeconds > 0) {
    say(`warming up ${label} (${window.warmupSeconds} s)`);
    await load(target, scenario, window.warmupSeconds, counter);
    await drain(target.store, 'the warm-up');
  }
  interrupted.throwIfAborted();
  say(`measuring ${label} (${window.durationSeconds} s)`);
  const isService = target.pgPid !== null && target.peer !== true;
  const noCommits = { sum: 0, count: 0 };
  const commitsBefore = isService ? await commitStats(target.url) : noCommits;
  const cpuBefore = await cpuSnapshot(target);
  const started = performance.now();
  const result = await load(target, scenario, window.durationSeconds, counter);
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = await cpuSnapshot(target);
  const commitsAfter = isService ? await commitStats(target.url) : noCommits;
  interrupted.throwIfAborted();
  const commits = commitsAfter.count - commitsBefore.count;
  const projectionsDrain = await drain(target.store, label);
  return {
    scenario: scenario.name,
    config: scenario.config,
    bulkKind: scenario.bulkKind,
    responses: result.requests.total,
    reqPerSec: result.requests.mean,
    itemsPerSec: result.requests.mean * scenario.items,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    notQueued: result.mismatches,
    errors: result.errors,
    timeouts: result.timeouts,
    ceiling: null,
    peer: null,
    eventsPerCommit: isService && commits > 0 ? (commitsAfter.sum - commitsBefore.sum) / commits : null,
    commitsPerSec: isService ? commits / seconds : null,
    cpuCores: coresBetween(cpuBefore, cpuAfter, seconds),
    projectionsDrain,
  };
}
