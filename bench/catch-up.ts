import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { projections } from '../projections/index.js';
import { nodeFlagsOf } from '../src/node-flags.js';
import { interrupted, startChild, stopChild, type Child } from './children.js';
import { ownCpuSeconds } from './cpu.js';
import { accountsBehind, anyCursor, appliedByOwner, appliedByProjection, claimsMade, partsHeld } from './progress.js';
import { checkReadModels, coresBetween, cpuNow, groupRows, storeFacts } from './projections.js';
import type { ProjectionRow } from './report.js';

/**
 * Catch-up from nothing projected: `workers` projection worker processes (src/worker-main.ts, as
 * `npm run worker` runs it) started together on a filled store, timed from the first cursor made
 * until every account's cursor of each projection is at the account's last event. Meanwhile the
 * parts each worker holds are sampled (as the status shows them), to see how they share.
 */

export interface WorkerShare {
  /** pid@host, as the status names it. */
  name: string;
  /** Parts held when the last projection caught up. */
  partsAtEnd: number[];
  /** The most parts it held at any sample. */
  maxParts: number;
  /** Events applied in the accounts of the parts it held at the end. */
  eventsApplied: number;
  /** CPU of its process over the catch-up, cores. */
  cpuCores: number | null;
}

export interface CatchUpResult {
  rows: ProjectionRow[];
  problems: string[];
  caughtUp: boolean;
  workers: WorkerShare[];
  /** Claims made on parts during the catch-up (each a part changing hands, or taken when free). */
  claims: number;
  /** Seconds from the start until the parts were first shared evenly (16 / workers each); null if never. */
  evenAfterSeconds: number | null;
}

export interface CatchUpOptions {
  root: string;
  env: NodeJS.ProcessEnv;
  db: pg.Pool;
  pgPid: number | null;
  readRate: number | null;
  limitSeconds: number;
  workers: number;
  /** The group's first row: 'catch-up', 'catch-up, 2 workers'. */
  label: string;
}

const n = (value: number): string => value.toLocaleString('en-US');
const say = (line: string): void => void process.stderr.write(`${line}\n`);

export async function measureCatchUp(options: CatchUpOptions, children: Child[]): Promise<CatchUpResult> {
  const facts = await storeFacts(options.db);
  const claimsBefore = await claimsMade(options.db);
  const started: Child[] = [];
  for (let i = 0; i < options.workers; i += 1) {
    const name = options.workers === 1 ? 'worker' : `worker ${i + 1} of ${options.workers}`;
    const worker = startChild(name, join(options.root, 'dist', 'src', 'worker-main.js'), options.env, options.root, { nodeFlags: nodeFlagsOf('worker') });
    children.push(worker);
    started.push(worker);
  }
  const exited: { first: Child | null } = { first: null };
  for (const worker of started) void worker.exited.then(() => (exited.first ??= worker));
  const pids = started.map((w) => w.process.pid);
  const doneAt = new Map<string, number>();
  let applied = new Map<string, number>();
  const maxParts = new Map<string, number>();
  let held = new Map<string, number[]>();
  let t0: number | null = null;
  let evenAt: number | null = null;
  let cpuStart: Awaited<ReturnType<typeof cpuNow>> | null = null;
  let ownStart: (number | null)[] = [];
  const spawned = performance.now();
  let lastSaid = spawned;
  let now = spawned;
  try {
    while (doneAt.size < projections.length) {
      interrupted.throwIfAborted();
      if (exited.first) throw new Error(`${exited.first.name} exited before catching up:\n${exited.first.problems.join('\n')}`);
      if (now - (t0 ?? spawned) > options.limitSeconds * 1000) break;
      if (t0 === null && (await anyCursor(options.db))) {
        t0 = performance.now();
        cpuStart = await cpuNow(pids, options.pgPid);
        ownStart = await Promise.all(pids.map((pid) => (pid === undefined ? null : ownCpuSeconds(pid))));
      }
      const behind = await accountsBehind(options.db);
      held = await partsHeld(options.db);
      now = performance.now();
      for (const [name, parts] of held) maxParts.set(name, Math.max(maxParts.get(name) ?? 0, parts.length));
      const share = 16 / options.workers;
      if (t0 !== null && evenAt === null && held.size === options.workers && [...held.values()].every((parts) => parts.length === share)) evenAt = now;
      for (const p of projections) if (t0 !== null && !doneAt.has(p.name) && behind.get(p.name) === 0) doneAt.set(p.name, now);
      if (t0 !== null && now - lastSaid >= 3_000) {
        lastSaid = now;
        applied = await appliedByProjection(options.db);
        const progress = projections.map((p) => `${p.name} ${n(applied.get(p.name) ?? 0)}/${n(facts.byProjection.get(p.name) ?? 0)}`);
        const shares = [...held.values()].map((parts) => parts.length).join('/');
        say(`  applying: ${progress.join(', ')}; parts ${shares} (${((now - t0) / 1000).toFixed(0)} s)`);
      }
      await sleep(50);
    }
    if (t0 === null || cpuStart === null) throw new Error(`no worker started a projection within ${options.limitSeconds} s`);
    const start = t0;
    const caughtUp = doneAt.size === projections.length;
    const end = caughtUp ? Math.max(...doneAt.values()) : now;
    const seconds = (end - t0) / 1000;
    const elapsed = (performance.now() - t0) / 1000;
    const cpu = coresBetween(cpuStart, await cpuNow(pids, options.pgPid), elapsed);
    const ownEnd = await Promise.all(pids.map((pid) => (pid === undefined ? null : ownCpuSeconds(pid))));
    applied = await appliedByProjection(options.db);
    const byOwner = await appliedByOwner(options.db);
    const claims = (await claimsMade(options.db)) - claimsBefore;
    const workers = started.map((child, i): WorkerShare => {
      const name = [...maxParts.keys()].find((key) => key.startsWith(`${child.process.pid}@`)) ?? `${child.process.pid}@?`;
      const [a, b] = [ownStart[i] ?? null, ownEnd[i] ?? null];
      return { name, partsAtEnd: held.get(name) ?? [], maxParts: maxParts.get(name) ?? 0, eventsApplied: byOwner.get(name) ?? 0, cpuCores: a === null || b === null ? null : (b - a) / elapsed };
    });
    const perProjection = projections.map((p) => {
      const at = doneAt.get(p.name);
      return { name: p.name, events: applied.get(p.name) ?? 0, seconds: ((at ?? end) - start) / 1000, finished: at !== undefined };
    });
    if (!caughtUp) say(`  the workers did not catch up within ${options.limitSeconds} s: stopping them`);
    const rows = groupRows(options.label, facts, perProjection, seconds, cpu, options.readRate);
    const problems = caughtUp ? await checkReadModels(options.db, facts) : [];
    return { rows, problems, caughtUp, workers, claims, evenAfterSeconds: evenAt === null ? null : (evenAt - t0) / 1000 };
  } finally {
    for (const worker of started) say(`  ${worker.name} stopped (SIGTERM): ${await stopChild(worker, 60_000)}`);
  }
}
