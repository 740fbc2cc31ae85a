import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';
import { projections } from '../projections/index.js';
import { defaultBatchSize } from '../projections/runner/worker.js';
import { loadConfig } from '../src/config.js';
import { runningEmbeddedServer } from '../src/db/embedded.js';
import { createPool, withDatabase } from '../src/db/pool.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { interrupted, startChild, stopChild, type Child } from './children.js';
import { machineBusySeconds, ownCpuSeconds, treeCpuSeconds } from './cpu.js';
import { appliedByProjection } from './progress.js';
import type { RebuildMessage } from './rebuild-child.js';
import type { ProjectionRow } from './report.js';
import { countByType, fillStore } from './store-fill.js';

/**
 * The projection scenarios of `npm run bench`, on a store filled straight in SQL (store-fill.ts):
 * how fast the four projections apply a stored backlog (a worker process starting from an empty
 * checkpoint) and how long a full rebuild of all four takes. Each has a time limit: past it the
 * work is stopped and the rate so far reported, so that a slow build cannot hold the bench up.
 */

// The database `npm start` makes on its embedded server (src/db/database.ts).
const embeddedDatabaseName = 'tracking';

export async function storeUrl(dataDir: string): Promise<string> {
  const server = await runningEmbeddedServer(dataDir);
  if (!server) throw new Error(`no embedded PostgreSQL running on ${dataDir}`);
  return withDatabase(server(), embeddedDatabaseName);
}

const rate = (events: number, seconds: number): number => (seconds > 0 ? events / seconds : 0);
const say = (line: string): void => void process.stderr.write(`${line}\n`);
const n = (value: number): string => value.toLocaleString('en-US');

/** Rows [from, to) of the mix, with progress; then VACUUM ANALYZE, as autovacuum would have done on an older store. */
export async function fill(pool: pg.Pool, from: number, to: number, accounts: string[], startMs: number): Promise<void> {
  const started = performance.now();
  let lastSaid = started;
  await fillStore(pool, from, to, {
    accounts,
    startMs,
    onProgress: (done) => {
      interrupted.throwIfAborted();
      const now = performance.now();
      if (now - lastSaid < 3_000) return;
      lastSaid = now;
      say(`  filling the store: ${n(from + done)} / ${n(to)} events (${n(Math.round(rate(done, (now - started) / 1000)))}/s)`);
    },
  });
  await pool.query('VACUUM (ANALYZE) events');
  say(`  store filled: ${n(to - from)} events in ${((performance.now() - started) / 1000).toFixed(1)} s (VACUUM ANALYZE included)`);
}

export interface StoreFacts {
  total: number;
  byType: Map<string, number>;
  /** Events each projection applies from an empty checkpoint: those of its types. */
  byProjection: Map<string, number>;
}

export async function storeFacts(db: pg.Pool): Promise<StoreFacts> {
  const byType = await countByType(db);
  const total = [...byType.values()].reduce((a, b) => a + b, 0);
  const byProjection = new Map(projections.map((p) => [p.name, p.eventTypes.reduce((sum, type) => sum + (byType.get(type) ?? 0), 0)]));
  return { total, byType, byProjection };
}

/**
 * The raw read ceiling: the catch-up read alone (store.readAll, the worker's query, in batches of
 * the worker's size, every payload decoded, nothing applied), by one reader, for at most
 * `limitSeconds`. No projection can be faster than the read it starts with.
 */
export async function measureReadOnly(url: string, total: number, limitSeconds: number, batchSize = 0): Promise<ProjectionRow> {
  const pool = createPool(url, 2, 60_000);
  try {
    const store = new PostgresEventStore(pool);
    const batch = batchSize > 0 ? batchSize : (loadConfig({}).projectionBatchSize ?? defaultBatchSize);
    let checkpoint: string | null = null;
    let events = 0;
    let finished = false;
    const started = performance.now();
    while (performance.now() - started < limitSeconds * 1000) {
      interrupted.throwIfAborted();
      const page = await store.readAll(checkpoint, batch);
      if (page.checkpoint === checkpoint) {
        finished = true;
        break;
      }
      events += page.events.length;
      checkpoint = page.checkpoint;
    }
    const seconds = (performance.now() - started) / 1000;
    if (finished && events !== total) throw new Error(`the catch-up read returned ${events} events, the store holds ${total}`);
    return {
      scenario: 'read ceiling: the catch-up query alone (readAll, no apply)',
      events,
      seconds,
      eventsPerSec: rate(events, seconds),
      vsRead: 1,
      vsWrite: null,
      finished: finished ? 'yes' : `no (${n(events)} of ${n(total)} in ${limitSeconds} s)`,
      cpuCores: null,
    };
  } finally {
    await pool.end();
  }
}

/** CPU seconds so far of the processes running the projections (together), PostgreSQL, this process and the machine. */
export async function cpuNow(pids: (number | undefined)[], pgPid: number | null) {
  const own = process.cpuUsage();
  let node: number | null = 0;
  for (const pid of pids) {
    const seconds = pid === undefined ? null : await ownCpuSeconds(pid);
    node = node === null || seconds === null ? null : node + seconds;
  }
  return {
    node,
    pg: pgPid === null ? null : await treeCpuSeconds(pgPid),
    bench: (own.user + own.system) / 1e6,
    machine: await machineBusySeconds(),
  };
}

export function coresBetween(a: Awaited<ReturnType<typeof cpuNow>>, b: Awaited<ReturnType<typeof cpuNow>>, seconds: number): ProjectionRow['cpuCores'] {
  const d = (x: number | null, y: number | null): number | null => (x === null || y === null ? null : (y - x) / seconds);
  const node = d(a.node, b.node);
  const postgres = d(a.pg, b.pg);
  const bench = d(a.bench, b.bench);
  const machine = d(a.machine, b.machine);
  // Whatever else ran on the machine meanwhile (the bench process itself is counted with it).
  const other = machine === null || node === null || postgres === null ? null : Math.max(0, machine - node - postgres - (bench ?? 0));
  return { node, postgres, other };
}

/**
 * Read models against the store, once every projection has caught up: each event type gave its
 * rows, and no event was applied twice (events applied over the accounts' cursors is exactly the
 * projection's share).
 * Returns the mismatches.
 */
export async function checkReadModels(db: pg.Pool, facts: StoreFacts): Promise<string[]> {
  const count = async (sql: string): Promise<number> => Number((await db.query<{ n: string }>(sql)).rows[0]?.n ?? NaN);
  const problems: string[] = [];
  const expect = (what: string, actual: number, expected: number): void => {
    if (actual !== expected) problems.push(`${what}: ${n(actual)}, expected ${n(expected)}`);
  };
  const type = (t: string): number => facts.byType.get(t) ?? 0;
  expect('track_index rows', await count('SELECT count(*)::text AS n FROM track_index'), facts.total);
  expect('user_events rows', await count('SELECT count(*)::text AS n FROM user_events'), type('EventTracked'));
  expect('product_events rows', await count('SELECT count(*)::text AS n FROM product_events'), type('ProductEventTracked'));
  expect('sum of products.version', await count('SELECT coalesce(sum(version), 0)::text AS n FROM products'), type('ProductSubmitted'));
  expect('lead_merges rows', await count('SELECT count(*)::text AS n FROM lead_merges'), type('ProfilesMerged'));
  // One lead per stream with a profile event: user-... (upserts, merges) and anonymous-... (upserts).
  expect(
    'leads rows',
    await count('SELECT count(*)::text AS n FROM leads'),
    await count("SELECT count(DISTINCT stream_name)::text AS n FROM events WHERE event_type IN ('UserUpserted', 'ProfilesMerged')"),
  );
  const applied = await appliedByProjection(db);
  for (const p of projections) expect(`${p.name} events applied`, applied.get(p.name) ?? 0, facts.byProjection.get(p.name) ?? NaN);
  return problems;
}

export function groupRows(
  label: string,
  facts: StoreFacts,
  perProjection: { name: string; events: number; seconds: number; finished: boolean }[],
  seconds: number,
  cpu: ProjectionRow['cpuCores'],
  readRate: number | null,
): ProjectionRow[] {
  const vs = (r: number): number | null => (readRate ? r / readRate : null);
  const all = perProjection.every((p) => p.finished);
  const rows: ProjectionRow[] = perProjection.map((p) => ({
    scenario: `  ${p.name}`,
    events: p.events,
    seconds: p.seconds,
    eventsPerSec: rate(p.events, p.seconds),
    vsRead: vs(rate(p.events, p.seconds)),
    vsWrite: null,
    finished: p.finished ? 'yes' : `no (${n(p.events)} of ${n(facts.byProjection.get(p.name) ?? 0)})`,
    cpuCores: null,
  }));
  const applied = perProjection.reduce((sum, p) => sum + p.events, 0);
  rows.push({ scenario: '  all four: events applied', events: applied, seconds, eventsPerSec: rate(applied, seconds), vsRead: null, vsWrite: null, finished: all ? 'yes' : 'no', cpuCores: null });
  // Store events: what the four have all applied, the slowest one's progress (its share of the store).
  const slowest = Math.min(...perProjection.map((p) => p.events / Math.max(1, facts.byProjection.get(p.name) ?? 1)));
  const storeEvents = all ? facts.total : Math.floor(slowest * facts.total);
  rows.unshift({
    scenario: `${label}: store events, all four`,
    events: storeEvents,
    seconds,
    eventsPerSec: rate(storeEvents, seconds),
    vsRead: vs(rate(storeEvents, seconds)),
    vsWrite: null,
    finished: all ? 'yes' : `no: stopped at the limit, ${n(storeEvents)} of ${n(facts.total)}`,
    cpuCores: cpu,
  });
  return rows;
}

/**
 * A full rebuild of every projection at once (bench/rebuild-child.ts: `rebuildProjection` for each,
 * no worker active, so that process replays): read models emptied, every stored event replayed.
 * Rows: the whole, from the requests to the last finish, then one per projection (its own start to
 * finish, from its checkpoint row).
 */
export async function measureRebuild(
  options: { root: string; url: string; db: pg.Pool; pgPid: number | null; readRate: number | null; limitSeconds: number; env: Record<string, string> },
  children: Child[],
): Promise<{ rows: ProjectionRow[]; problems: string[]; finished: boolean }> {
  const facts = await storeFacts(options.db);
  const env: NodeJS.ProcessEnv = { ...process.env, BENCH_STORE_URL: options.url, LOG_LEVEL: 'warn' };
  delete env.PROJECTION_BATCH_SIZE;
  Object.assign(env, options.env);
  const child = startChild('rebuild', join(options.root, 'dist', 'bench', 'rebuild-child.js'), env, options.root, { ipc: true });
  children.push(child);
  const progress = new Map<string, { applied: number; target: number | null }>();
  let started: number | null = null;
  let cpuStart: Awaited<ReturnType<typeof cpuNow>> | null = null;
  const results = new Map<string, Extract<RebuildMessage, { type: 'finished' }>['result']>();
  let done = false;
  let doneAt = 0;
  child.process.on('message', (message: RebuildMessage) => {
    if (message.type === 'started') started = performance.now();
    else if (message.type === 'progress') progress.set(message.projection, { applied: message.applied, target: message.target });
    else if (message.type === 'finished') results.set(message.result.projection, message.result);
    else if (message.type === 'done') {
      done = true;
      doneAt = performance.now();
    }
  });
  let gone = false;
  void child.exited.then(() => (gone = true));
  const spawned = performance.now();
  let lastSaid = spawned;
  try {
    for (;;) {
      interrupted.throwIfAborted();
      const now = performance.now();
      if (started !== null && cpuStart === null) cpuStart = await cpuNow([child.process.pid], options.pgPid);
      if (done) break;
      if (gone) throw new Error(`the rebuild process exited before it finished:\n${child.problems.join('\n')}`);
      if (now - (started ?? spawned) > options.limitSeconds * 1000) break;
      if (started !== null && now - lastSaid >= 3_000) {
        lastSaid = now;
        const parts = projections.map((p) => {
          const s = progress.get(p.name);
          return `${p.name} ${n(s?.applied ?? 0)}/${s?.target === null || s?.target === undefined ? '?' : n(s.target)}`;
        });
        say(`  rebuilding: ${parts.join(', ')} (${((now - started) / 1000).toFixed(0)} s)`);
      }
      await sleep(50);
    }
    const finished = done;
    if (started === null || cpuStart === null) throw new Error(`the rebuild did not start within ${options.limitSeconds} s`);
    const t0: number = started;
    const end = finished ? doneAt : performance.now();
    const cpu = coresBetween(cpuStart, await cpuNow([child.process.pid], options.pgPid), (performance.now() - t0) / 1000);
    const perProjection = projections.map((p) => {
      const r = results.get(p.name);
      if (r && !r.ranHere) throw new Error(`the rebuild of ${p.name} was run by another worker, not the bench's process`);
      return r
        ? { name: p.name, events: r.events, seconds: r.seconds, finished: true }
        : { name: p.name, events: progress.get(p.name)?.applied ?? 0, seconds: (end - t0) / 1000, finished: false };
    });
    if (!finished) say(`  the rebuild did not finish within ${options.limitSeconds} s: stopping it`);
    const rows = groupRows('rebuild', facts, perProjection, (end - t0) / 1000, cpu, options.readRate);
    return { rows, problems: finished ? await checkReadModels(options.db, facts) : [], finished };
  } finally {
    // Done: it has exited or is about to. Otherwise SIGTERM ends it at once, its batches rolled back.
    const outcome = await stopChild(child, 30_000);
    say(`  rebuild process stopped: ${outcome}`);
  }
}
