import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { createPool, type Pool } from '../src/db/pool.js';
import type { EventStore, EventType } from '../src/eventstore/port.js';
import { createLogger } from '../src/logger.js';
import { projectRoot } from '../src/paths.js';
import { selectCheckpoint, type CheckpointRow } from '../projections/runner/checkpoints-sql.js';
import { projections, type Projection } from '../projections/index.js';
import { rebuildProjection, type RebuildResult } from '../projections/runner/rebuild.js';
import { ProjectionRunner } from '../projections/runner/runner.js';
import { projectionStatus, type ProjectionStatus } from '../projections/runner/status.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { freshDatabase } from './support/database.js';
import { bulkResults, queued } from './support/replies.js';

/**
 * Projection workers end to end: a rebuild gives the live read models row for row, a worker process
 * killed mid-batch neither loses nor doubles an effect, and a standby worker process takes over
 * from an active one that dies.
 */

const silent = createLogger('silent');
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

// ---------------------------------------------------------------------------------------------
// Read-model snapshots
// ---------------------------------------------------------------------------------------------

/**
 * Every read-model table with its primary key, and the columns that record when a row was written
 * rather than what the events say (left out of the comparison).
 */
const readModels: readonly (readonly [table: string, key: string, writeOrder?: string])[] = [
  ['leads', 'account_id, profile_kind, profile_id'],
  ['lead_merges', 'account_id, anonymous_id'],
  ['user_events', 'event_id'],
  ['products', 'account_id, product_id'],
  ['product_events', 'event_id'],
  ['track_index', 'event_id', 'indexed_order'],
  ['track_index_repeats', 'event_id, stream_name, stream_position'],
];

/** Rows of every read-model table, each row as JSON text, in primary-key order. */
type Snapshot = Record<string, string[]>;

async function snapshot(pool: Pool): Promise<Snapshot> {
  const result: Snapshot = {};
  for (const [table, key, writeOrder] of readModels) {
    const row = writeOrder ? `to_jsonb(t) - '${writeOrder}'` : 'to_jsonb(t)';
    const { rows } = await pool.query<{ row: string }>(`SELECT (${row})::text AS row FROM ${table} t ORDER BY ${key}`);
    result[table] = rows.map((r) => r.row);
  }
  return result;
}

/** Fails on the first row that differs, showing both versions of it. */
function expectSameReadModels(actual: Snapshot, expected: Snapshot, what: string): void {
  for (const [table] of readModels) {
    const got = actual[table] ?? [];
    const want = expected[table] ?? [];
    let at = got.findIndex((row, i) => row !== want[i]);
    if (at < 0 && got.length !== want.length) at = Math.min(got.length, want.length);
    if (at >= 0) {
      expect.fail(
        `${what}: table ${table} differs (${got.length} rows, expected ${want.length}); first difference at row ${at}:\n` +
          `     got ${got[at] ?? '(no row)'}\nexpected ${want[at] ?? '(no row)'}`,
      );
    }
  }
}

const trackIndexTypes = projections.find((p) => p.name === 'track-index')?.eventTypes ?? [];

const rowCounts = (s: Snapshot): Record<string, number> => Object.fromEntries(readModels.map(([t]) => [t, s[t]?.length ?? 0]));

/**
 * Replays the events of `store` into the read models of a new, empty database, with batches of
 * `batchSize` events: an independent replay to compare against.
 */
async function independentReplay(store: EventStore, batchSize: number): Promise<Snapshot> {
  const database = await freshDatabase();
  const pool = createPool(database.url, projections.length + 2, 60_000);
  const runners = projections.map((projection) =>
    new ProjectionRunner(projection, { pool, store, log: silent, batchSize, untilCaughtUp: true }).start(),
  );
  try {
    await within(Promise.all(runners.map((r) => r.done())), 20_000, 'the independent replay');
    return await snapshot(pool);
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
    await pool.end();
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` until it gives a value (not undefined/false); fails with `what` after `timeoutMs`. */
async function eventually<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`after ${timeoutMs} ms: ${what()}`);
    await sleep(25);
  }
}

/** Runs `work` on every item with at most `limit` at a time. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** Posts an item (or a bulk array) and asserts that every item in it was queued. */
async function send(app: TestApp, account: Credentials, endpoint: string, body: unknown): Promise<void> {
  const reply = await app.ingest(account, endpoint, body);
  if (!Array.isArray(body)) {
    queued(reply);
    return;
  }
  const results = bulkResults(reply);
  expect(results, `${endpoint} ${JSON.stringify(body).slice(0, 200)}`).to.have.length(body.length);
  results.forEach((r, i) => expect(r.status, `${endpoint} item ${i}: ${JSON.stringify(r)}`).to.equal('queued'));
}

async function eventCount(pool: Pool, types: readonly EventType[]): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE event_type = ANY($1)', [types]);
  return rows[0]?.n ?? 0;
}

async function checkpointOf(pool: Pool, projection: Projection): Promise<CheckpointRow> {
  const { rows } = await pool.query<CheckpointRow>(selectCheckpoint, [projection.name]);
  expect(rows[0], `checkpoint row of ${projection.name}`).to.not.equal(undefined);
  return rows[0] as CheckpointRow;
}

/** GET on the read API as the administrator. */
function readApi<T>(app: TestApp, account: Credentials, path: string): Promise<Reply<T>> {
  return app.get<T>(`/admin/v1/accounts/${account.licenseCode}${path}`, `Bearer ${adminToken}`);
}

interface LeadBody {
  userId: string | null;
  anonymousId: string | null;
  anonymousIds: string[];
  attributes: Record<string, unknown>;
  version: number;
}

// ---------------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------------

const ids = (tag: string) => ({
  user: (i: number) => `user-${tag}-${i}`,
  anon: (i: number) => `anon-${tag}-${i}`,
  sku: (i: number) => `sku-${tag}-${i}`,
});

/**
 * Users single and bulk with custom attributes of every type, merges in both orders and repeated,
 * events of known and anonymous profiles, products submitted repeatedly and product events.
 * Attribute types per account: plan string, visits and seats number, newsletter boolean,
 * last_login datetime.
 */
async function variedWorkload(app: TestApp, account: Credentials, tag: string, bulkRequests: number): Promise<void> {
  const { user, anon, sku } = ids(tag);
  const post = (endpoint: string, body: unknown) => send(app, account, endpoint, body);
  // Anonymous profiles first.
  for (let i = 1; i <= 4; i += 1) {
    await post('users', { anonymousId: anon(i), city: `City ${i}`, attributes: { plan: 'free', visits: i, newsletter: i % 2 === 0 } });
  }
  // A merge after the anonymous profile exists: the known profile takes what it was not sent itself.
  await post('users', { userId: user(1), anonymousId: anon(1), firstName: 'Ann', attributes: { plan: 'pro' } });
  // A merge before the anonymous profile exists; the anonymous profile is sent afterwards.
  await post('users', { userId: user(2), anonymousId: anon(9), email: 'bo@example.com', attributes: { plan: 'gold' } });
  await post('users', {
    anonymousId: anon(9),
    email: 'anon9@example.com',
    city: 'Nine',
    attributes: { plan: 'trial', visits: 9, last_login: '2024-03-01T08:00:00+0100' },
  });
  // Repeated merges: the same pair again alone, and twice in one bulk request.
  await post('users', { userId: user(1), anonymousId: anon(1), attributes: { seats: 3 } });
  await post('users/bulk', [
    { userId: user(3), anonymousId: anon(2), attributes: { plan: 'team' } },
    { userId: user(3), anonymousId: anon(2), lastName: 'Ng', attributes: {} },
    { anonymousId: anon(2), country: 'SE', attributes: { visits: 20 } },
  ]);
  // A second anonymous profile merged into the same user.
  await post('users', { userId: user(1), anonymousId: anon(4), attributes: {} });
  // An anonymous profile sent after its merge passes new values on to its known profile.
  await post('users', { anonymousId: anon(1), country: 'NO', attributes: { visits: 5, last_login: '2024-02-01T10:00:00Z' } });
  // Bulk requests, userIds repeated within and across requests.
  const bulks = Array.from({ length: bulkRequests }, (_, b) =>
    Array.from({ length: 60 }, (_, i) => ({
      userId: user((b * 7 + i) % 15 + 1),
      email: `u${i}@example.com`,
      birth_date: '1990-05-01T00:00:00+0200',
      opt_in_sms: i % 3 === 0,
      points: b * 100 + i,
      attributes: { plan: ['free', 'pro', 'team'][i % 3] as string, seats: i, newsletter: b % 2 === 0, last_login: `2024-01-0${(i % 9) + 1}T10:00:00Z` },
    })),
  );
  await inParallel(bulks, 4, (bulk) => post('users/bulk', bulk));
  // Events of known profiles, of a merged and an unmerged anonymous profile, and of one never sent.
  const events: unknown[] = [];
  for (let i = 1; i <= 6; i += 1) {
    events.push({ userId: user(i), eventName: 'Viewed', eventTime: `2024-01-0${i}T10:00:00`, eventData: { page: `/p/${i}`, n: i } });
    events.push({ userId: user(i), eventName: 'Clicked', eventData: { at: '2024-01-01T10:00:00Z', tags: ['a', 1] } });
  }
  events.push({ anonymousId: anon(1), eventName: 'Opened' });
  events.push({ anonymousId: anon(3), eventName: 'Opened', eventTime: '2024-01-01T10:00:00+0530' });
  events.push({ anonymousId: anon(50), eventName: 'Opened', eventData: { source: 'ad' } });
  await inParallel(events, 6, (event) => post('events', event));
  // Products submitted repeatedly (the latest wins), with and without a userId; product events.
  const products: unknown[] = [];
  for (let round = 1; round <= 4; round += 1) {
    for (let i = 1; i <= 5; i += 1) {
      products.push({ productId: sku(i), ...(round % 2 ? { userId: user(i) } : {}), properties: { name: `Item ${i}`, price: i * round, inStock: round % 2 === 0 } });
    }
  }
  for (const product of products) await post('products', product);
  const productEvents: unknown[] = [];
  for (let i = 1; i <= 5; i += 1) {
    productEvents.push({ productId: sku(i), userId: null, eventName: 'Viewed' });
    productEvents.push({ productId: sku(i), userId: user(i), eventName: 'Added to cart', eventTime: '2024-06-01T12:00:00+0200', eventData: { quantity: i } });
  }
  await inParallel(productEvents, 6, (item) => post('productsevents', item));
}

/** One round of items posted while projections rebuild: new profiles and merges, and repeats of `base`'s. */
async function liveRound(app: TestApp, account: Credentials, base: string, round: number): Promise<void> {
  const old = ids(base);
  const fresh = ids(`${base}-r${round}`);
  const post = (endpoint: string, body: unknown) => send(app, account, endpoint, body);
  await Promise.all([
    (async () => {
      await post('users', { anonymousId: fresh.anon(1), city: 'Late', attributes: { visits: round } });
      await post('users', { userId: fresh.user(1), anonymousId: fresh.anon(1), attributes: { plan: 'pro' } });
      await post('users', { userId: old.user(1), anonymousId: old.anon(1), attributes: { seats: round } });
      await post('users', { anonymousId: fresh.anon(1), attributes: { last_login: '2024-05-05T05:05:05Z' } });
    })(),
    post(
      'users/bulk',
      Array.from({ length: 20 }, (_, i) => ({ userId: old.user((round + i) % 15 + 1), attributes: { visits: round * 100 + i } })),
    ),
    post('events', { userId: fresh.user(1), eventName: 'Live', eventData: { round } }),
    post('events', { anonymousId: fresh.anon(2), eventName: 'Live' }),
    post('products', { productId: old.sku((round % 5) + 1), properties: { name: 'Changed', round } }),
    post('productsevents', { productId: old.sku((round % 5) + 1), userId: fresh.user(1), eventName: 'Viewed', eventData: { round } }),
  ]);
}

// ---------------------------------------------------------------------------------------------
// Worker processes
// ---------------------------------------------------------------------------------------------

const workerScript = resolve(projectRoot, 'dist/src/worker-main.js');
const projectNode = resolve(projectRoot, 'node_modules/.bin/node');

interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** `pid@host` as status shows it. */
  name: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What it logged (warnings and errors), for failure messages. */
  output(): string;
}

const started: WorkerProcess[] = [];

function startWorker(databaseUrl: string, env: Record<string, string> = {}): WorkerProcess {
  const child = spawn(existsSync(projectNode) ? projectNode : process.execPath, [workerScript], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', PROJECTION_POLL_MS: '20', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  const pid = child.pid as number;
  const worker = { child, pid, name: `${pid}@${hostname()}`, exited, output: () => output };
  started.push(worker);
  return worker;
}

async function kill(worker: WorkerProcess, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  worker.child.kill(signal);
  return within(worker.exited, 15_000, `worker ${worker.pid} to exit on ${signal}`);
}

/** application_name of a worker's session for `projection` (see the runner). */
const sessionName = (projection: Projection, pid: number): string => `tracking-projection ${projection.name} ${pid}@${hostname()}`.slice(0, 63);

/**
 * Waits until one of the worker's sessions is inside a batch transaction that has written rows
 * (it has a transaction id); false when none was seen within `timeoutMs`.
 */
async function waitMidBatch(pool: Pool, worker: WorkerProcess, timeoutMs: number): Promise<string | false> {
  const names = projections.map((p) => sessionName(p, worker.pid));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && worker.child.exitCode === null) {
    const { rows } = await pool.query<{ application_name: string }>(
      `SELECT application_name FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = ANY($1) AND backend_xid IS NOT NULL LIMIT 1`,
      [names],
    );
    if (rows[0]) return rows[0].application_name;
  }
  return false;
}

async function stopStartedWorkers(): Promise<void> {
  // Only the worker processes this spec started, by their pid.
  for (const worker of started.splice(0)) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

describe('projection workers (e2e)', function () {
  this.timeout(60_000);
  afterEach(stopStartedWorkers);

  it('covers every read-model table in the snapshots', () => {
    expect(projections.flatMap((p) => p.tables).toSorted()).to.deep.equal(readModels.map(([t]) => t).toSorted());
  });

  it('applies every event once when the store spans a power-of-ten transaction id (999 -> 1000, 999999 -> 1000000, ...)', async () => {
    const app = await TestApp.start();
    try {
      const account = await app.account('xids');
      // Each request its own transaction: 12 products submitted 4 times each, and 12 events.
      for (let round = 1; round <= 4; round += 1) {
        for (let i = 1; i <= 12; i += 1) await send(app, account, 'products', { productId: `sku-${i}`, properties: { round } });
      }
      for (let i = 1; i <= 12; i += 1) await send(app, account, 'events', { userId: `u-${i}`, eventName: 'Viewed' });
      // A store written across a power of ten of transaction ids, as every long-lived database is at
      // 10^6, 10^7, ...: the ids are shifted down, order kept, so that they straddle 100.
      const { rows } = await app.pool.query<{ lo: number; hi: number }>(
        'SELECT min(transaction_id::text::bigint)::int AS lo, max(transaction_id::text::bigint)::int AS hi FROM events',
      );
      const { lo, hi } = rows[0] as { lo: number; hi: number };
      const shift = lo - (100 - Math.floor((hi - lo) / 2));
      expect(hi - lo, 'transaction ids of the workload').to.be.within(20, 190);
      expect(shift, 'the shift moves ids down').to.be.above(0);
      await app.pool.query('UPDATE events SET transaction_id = (transaction_id::text::bigint - $1)::text::xid8', [shift]);
      const { rows: sides } = await app.pool.query<{ below: number; above: number }>(
        "SELECT count(*) FILTER (WHERE transaction_id < '100'::xid8)::int AS below, count(*) FILTER (WHERE transaction_id >= '100'::xid8)::int AS above FROM events",
      );
      expect(sides[0]?.below, 'events below 100').to.be.above(10);
      expect(sides[0]?.above, 'events from 100').to.be.above(10);

      // Replayed in this process (no worker is active), in batches of 7.
      for (const projection of projections) {
        const result = await rebuildProjection(app.pool, app.services.store, projection, { log: silent, batchSize: 7, pollMs: 20 });
        expect(result.events, `${projection.name}: events replayed`).to.equal(await eventCount(app.pool, projection.eventTypes));
      }
      const { rows: versions } = await app.pool.query<{ product_id: string; version: number }>(
        'SELECT product_id, version FROM products ORDER BY product_id',
      );
      expect(Object.fromEntries(versions.map((r) => [r.product_id, r.version])), 'versions: every product was submitted 4 times').to.deep.equal(
        Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`sku-${i + 1}`, 4])),
      );
      const { rows: tracked } = await app.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM track_index');
      expect(tracked[0]?.n, 'track_index rows').to.equal(60);
    } finally {
      await app.stop();
    }
  });

  it('a rebuild gives the live read models row for row, also with items coming in during it', async () => {
    const app = await TestApp.start({ projectionBatchSize: 25 }, { projections: true });
    try {
      const account = await app.account('acme');
      const other = await app.account('globex');
      await Promise.all([variedWorkload(app, account, 'w1', 12), variedWorkload(app, other, 'g1', 2)]);
      await app.projected();
      const live = await snapshot(app.pool);
      // Live, every event reached the event-keyed tables once.
      expect(rowCounts(live), 'rows of the event-keyed tables vs the events stored').to.deep.include({
        user_events: await eventCount(app.pool, ['EventTracked']),
        product_events: await eventCount(app.pool, ['ProductEventTracked']),
        track_index: await eventCount(app.pool, trackIndexTypes),
      });
      // Later copies of an event id: none, Postgres stores each id once.
      expect(live.track_index_repeats, 'rows of track_index_repeats').to.deep.equal([]);
      for (const [table] of readModels) if (table !== 'track_index_repeats') expect(live[table], `rows of ${table} after the workload`).to.have.length.above(0);

      // A rebuild with nothing coming in: exactly the rows the live workers wrote.
      const quiet = await Promise.all(projections.map((p) => rebuildProjection(app.pool, app.services.store, p, { log: silent })));
      for (const result of quiet) expect(result.ranHere, 'the in-process active worker rebuilds').to.equal(false);
      await app.projected();
      expectSameReadModels(await snapshot(app.pool), live, 'rebuilt read models vs the live ones');
      const quietFinished = Math.max(...(await Promise.all(projections.map(async (p) => (await checkpointOf(app.pool, p)).rebuild_finished_at?.getTime() ?? 0))));

      // A rebuild while clients keep posting, from before it is asked for until after it is done.
      let rebuilding = true;
      let rounds = 0;
      const feeding = (async () => {
        while (rebuilding || rounds < 3) await liveRound(app, account, 'w1', rounds++);
      })().then(
        () => null,
        (error: unknown) => error,
      );
      await sleep(30);
      let results: RebuildResult[];
      const progress: Record<string, { applied: number; target: number | null }[]> = {};
      try {
        results = await Promise.all(
          projections.map((p) =>
            rebuildProjection(app.pool, app.services.store, p, { log: silent, onProgress: (step) => (progress[p.name] ??= []).push(step) }),
          ),
        );
      } finally {
        rebuilding = false;
      }
      const feedError = await feeding;
      if (feedError) throw feedError;
      await app.projected();
      const after = await snapshot(app.pool);

      // The items posted during the rebuild were stored while it ran, and all reached the read models.
      const trackIndex = await checkpointOf(app.pool, projections.find((p) => p.name === 'track-index') as Projection);
      const { rows: during } = await app.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM events WHERE recorded_at > $1 AND recorded_at < $2',
        [trackIndex.rebuild_started_at, trackIndex.rebuild_finished_at],
      );
      expect(during[0]?.n, 'events stored while track-index was rebuilding').to.be.above(0);
      const lead = await readApi<LeadBody>(app, account, `/leads/${ids(`w1-r${rounds - 1}`).user(1)}`);
      expect(lead.status, JSON.stringify(lead.body)).to.equal(200);
      expect(lead.body.anonymousIds).to.deep.equal([ids(`w1-r${rounds - 1}`).anon(1)]);
      expect(lead.body.attributes).to.deep.include({ plan: 'pro', visits: rounds - 1 });
      expect(lead.body.attributes.last_login).to.match(/^2024-05-05T05:05:05/);

      // Row for row what an independent replay of the whole store gives, in batches of another size.
      expectSameReadModels(after, await independentReplay(app.services.store, 40), 'read models after a rebuild under load vs an independent replay');
      expect(rowCounts(after).track_index).to.equal(await eventCount(app.pool, trackIndexTypes));

      // Checkpoints and status: the rebuild finished, and every event of the projection's types counted once.
      const statuses = await projectionStatus(app.pool, app.services.store);
      for (const [i, projection] of projections.entries()) {
        const events = await eventCount(app.pool, projection.eventTypes);
        const row = await checkpointOf(app.pool, projection);
        expect(row.rebuild_requested_at, `${projection.name}: rebuild still requested`).to.equal(null);
        expect(row.rebuild_started_at?.getTime(), `${projection.name}: rebuild started after the quiet one`).to.be.above(quietFinished);
        expect(row.rebuild_finished_at, `${projection.name}: rebuild finished`).to.be.an.instanceOf(Date);
        expect(row.events_applied, `${projection.name}: events applied`).to.equal(events);
        const result = results[i] as RebuildResult;
        expect(result.ranHere).to.equal(false);
        expect(result.events, `${projection.name}: events replayed by the time the rebuild caught up`).to.be.within(1, events);
        const steps = progress[projection.name] ?? [];
        expect(steps.at(-1)?.applied, `${projection.name}: last progress`).to.equal(result.events);
        const status = statuses.find((s) => s.projection === projection.name) as ProjectionStatus;
        expect(status.rebuild?.state, `${projection.name}: rebuild state`).to.equal('finished');
        expect(status.eventsApplied).to.equal(events);
        expect(status.lagEvents).to.equal(0);
        expect(status.active?.worker).to.equal(`${process.pid}@${hostname()}`);
        expect(status.standby).to.deep.equal([]);
      }
    } finally {
      await app.stop();
    }
  });

  it('a worker process SIGKILLed mid-batch again and again ends with every event applied exactly once', async () => {
    const app = await TestApp.start();
    try {
      const account = await app.account('kill');
      const post = (endpoint: string, body: unknown) => send(app, account, endpoint, body);
      // 4000 upserts of 160 users, 400 submissions of 40 products, 300 events, 200 product events.
      const bulks = Array.from({ length: 40 }, (_, b) =>
        Array.from({ length: 100 }, (_, i) => ({ userId: `k-${(b * 37 + i) % 160}`, attributes: { tier: `t${b}`, score: b * 100 + i, vip: i % 2 === 0 } })),
      );
      const singles: [string, unknown][] = [];
      for (let i = 0; i < 400; i += 1) singles.push(['products', { productId: `sku-${i % 40}`, properties: { round: Math.floor(i / 40) } }]);
      for (let i = 0; i < 300; i += 1) singles.push(['events', i % 3 ? { userId: `k-${i % 160}`, eventName: 'Viewed' } : { anonymousId: `a-${i}`, eventName: 'Seen' }]);
      for (let i = 0; i < 200; i += 1) singles.push(['productsevents', { productId: `sku-${i % 40}`, userId: i % 2 ? `k-${i}` : null, eventName: 'Viewed' }]);
      await Promise.all([inParallel(bulks, 4, (bulk) => post('users/bulk', bulk)), inParallel(singles, 12, ([endpoint, body]) => post(endpoint, body))]);
      const totals = new Map<string, number>();
      for (const p of projections) totals.set(p.name, await eventCount(app.pool, p.eventTypes));
      const total = [...totals.values()].reduce((a, b) => a + b, 0);
      const applied = async (): Promise<number> =>
        (await app.pool.query<{ n: number }>('SELECT coalesce(sum(events_applied), 0)::int AS n FROM projection_checkpoints')).rows[0]?.n ?? 0;

      // Killed during start-up, then at four points of the catch-up, each time inside a batch transaction.
      const env = { PROJECTION_BATCH_SIZE: '50' };
      const kills: { at: number; midBatch: string | false }[] = [];
      const early = startWorker(app.database.url, env);
      await sleep(150);
      expect((await kill(early, 'SIGKILL')).signal).to.equal('SIGKILL');
      for (const fraction of [0.05, 0.25, 0.5, 0.75]) {
        const worker = startWorker(app.database.url, env);
        await eventually(async () => (await applied()) >= fraction * total || worker.child.exitCode !== null, 15_000, () => `progress ${fraction}: ${worker.output()}`);
        const midBatch = await waitMidBatch(app.pool, worker, 1_000);
        const exit = await kill(worker, 'SIGKILL');
        expect(exit.signal, `worker exited by itself: ${worker.output()}`).to.equal('SIGKILL');
        kills.push({ at: (await applied()) / total, midBatch });
      }
      const midBatchKills = kills.filter((k) => k.midBatch);
      expect(midBatchKills.length, `kills inside a batch transaction: ${JSON.stringify(kills)}`).to.be.at.least(3);
      expect(kills.some((k) => k.at < 1), `kills before the end: ${JSON.stringify(kills)}`).to.equal(true);

      // The last one catches up and stops when told.
      const last = startWorker(app.database.url, env);
      await within(app.projected(20_000), 25_000, 'the last worker catching up').catch((error: unknown) => {
        throw new Error(`${String(error)}; worker output: ${last.output()}`);
      });
      expect((await kill(last, 'SIGTERM')).code, `SIGTERM exit: ${last.output()}`).to.equal(0);

      // Every profile's version is its number of upserts; every product's its number of submissions.
      const { rows: upserts } = await app.pool.query<{ id: string; n: number }>(
        "SELECT data->>'userId' AS id, count(*)::int AS n FROM events WHERE event_type = 'UserUpserted' GROUP BY 1 ORDER BY 1",
      );
      const { rows: leads } = await app.pool.query<{ id: string; n: number }>(
        "SELECT profile_id AS id, version AS n FROM leads WHERE profile_kind = 'user' ORDER BY 1",
      );
      expect(upserts).to.have.length(160);
      expect(leads, 'lead versions vs upserts per user').to.deep.equal(upserts);
      const { rows: submissions } = await app.pool.query<{ id: string; n: number }>(
        "SELECT data->>'productId' AS id, count(*)::int AS n FROM events WHERE event_type = 'ProductSubmitted' GROUP BY 1 ORDER BY 1",
      );
      const { rows: products } = await app.pool.query<{ id: string; n: number }>('SELECT product_id AS id, version AS n FROM products ORDER BY 1');
      expect(submissions).to.have.length(40);
      expect(products, 'product versions vs submissions per product').to.deep.equal(submissions);
      // Each event-keyed table holds exactly the events of its types.
      for (const [table, types] of [
        ['user_events', ['EventTracked']],
        ['product_events', ['ProductEventTracked']],
        ['track_index', trackIndexTypes],
      ] as const) {
        const { rows } = await app.pool.query<{ missing: number; extra: number; rows: number }>(
          `SELECT (SELECT count(*) FROM events e WHERE e.event_type = ANY($1) AND NOT EXISTS (SELECT 1 FROM ${table} t WHERE t.event_id = e.event_id))::int AS missing,
                  (SELECT count(*) FROM ${table} t WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.event_id = t.event_id AND e.event_type = ANY($1)))::int AS extra,
                  (SELECT count(*) FROM ${table})::int AS rows`,
          [types],
        );
        expect(rows[0], table).to.deep.equal({ missing: 0, extra: 0, rows: await eventCount(app.pool, types) });
      }
      for (const p of projections) {
        expect((await checkpointOf(app.pool, p)).events_applied, `${p.name}: events applied`).to.equal(totals.get(p.name));
      }

      // And row for row what a rebuild in this process (no worker is active) gives.
      const afterKills = await snapshot(app.pool);
      for (const projection of projections) {
        const result = await rebuildProjection(app.pool, app.services.store, projection, { log: silent, batchSize: 333, pollMs: 20 });
        expect(result.ranHere, `${projection.name} rebuilt in this process`).to.equal(true);
        expect(result.events).to.equal(totals.get(projection.name));
      }
      expectSameReadModels(await snapshot(app.pool), afterKills, 'read models after the kills vs a rebuild');
    } finally {
      await app.stop();
    }
  });

  /** Two worker processes: the first active for every projection, the second standing by for each. */
  async function activeAndStandby(app: TestApp): Promise<{ active: WorkerProcess; standby: WorkerProcess }> {
    const status = () => projectionStatus(app.pool, app.services.store);
    const active = startWorker(app.database.url);
    await eventually(async () => (await status()).every((s) => s.active?.worker === active.name), 10_000, () => `first worker active: ${active.output()}`);
    const standby = startWorker(app.database.url);
    let last: ProjectionStatus[] = [];
    await eventually(
      async () => (last = await status()).every((s) => s.standby.some((w) => w.worker === standby.name)),
      10_000,
      () => `second worker standing by: ${JSON.stringify(last)} ${standby.output()}`,
    );
    return { active, standby };
  }

  it('with two worker processes one is active, the other stands by and takes over when the first is killed', async () => {
    const app = await TestApp.start();
    try {
      const account = await app.account('failover');
      const status = () => projectionStatus(app.pool, app.services.store);
      const { active, standby } = await activeAndStandby(app);
      for (const s of await status()) {
        expect(s.active?.worker, `${s.projection}: active worker`).to.equal(active.name);
        expect(s.standby.map((w) => w.worker), `${s.projection}: standby workers`).to.deep.equal([standby.name]);
        expect(s.standby[0]?.sessionPid).to.not.equal(s.active?.sessionPid);
      }

      // The active worker projects.
      await send(app, account, 'users', { userId: 'before', attributes: { plan: 'pro' } });
      const before = await eventually(async () => {
        const reply = await readApi<LeadBody>(app, account, '/leads/before');
        return reply.status === 200 && reply;
      }, 5_000, () => 'lead "before" never reached the read models');
      expect(before.body.attributes).to.deep.equal({ plan: 'pro' });

      expect((await kill(active, 'SIGKILL')).signal).to.equal('SIGKILL');
      const killedAt = Date.now();
      // Items posted while no worker is active yet.
      await send(app, account, 'users', { userId: 'during', attributes: { plan: 'team' } });
      const trackID = queued(await app.ingest(account, 'events', { userId: 'during', eventName: 'Failover' }));

      let last: ProjectionStatus[] = [];
      await eventually(
        async () => (last = await status()).every((s) => s.active?.worker === standby.name),
        5_000,
        () => `the standby did not take over: ${JSON.stringify(last)}`,
      );
      const tookOverMs = Date.now() - killedAt;
      expect(tookOverMs).to.be.below(5_000);
      for (const s of last) expect(s.standby, `${s.projection}: standby after the takeover`).to.deep.equal([]);

      await send(app, account, 'users', { userId: 'after', attributes: { plan: 'free' } });
      const after = await eventually(async () => {
        const reply = await readApi<LeadBody>(app, account, '/leads/after');
        return reply.status === 200 && reply;
      }, 5_000, () => 'lead "after" never reached the read models');
      expect(after.body.attributes).to.deep.equal({ plan: 'free' });
      const during = await readApi<LeadBody>(app, account, '/leads/during');
      expect(during.status).to.equal(200);
      expect(during.body).to.deep.include({ userId: 'during', version: 1 });
      const events = await eventually(async () => {
        const reply = await readApi<{ events: { eventName?: string }[] }>(app, account, '/leads/during/events');
        return reply.status === 200 && reply.body.events.length > 0 && reply;
      }, 5_000, () => 'the event of "during" never reached the read models');
      expect(events.body.events).to.have.length(1);
      const track = await eventually(async () => {
        const reply = await readApi(app, account, `/track/${trackID}`);
        return reply.status === 200 && reply;
      }, 5_000, () => `trackID ${trackID} never indexed`);
      expect(track.status).to.equal(200);
      await app.projected(5_000);
      for (const s of await status()) expect(s.lagEvents, `${s.projection}: lag`).to.equal(0);
    } finally {
      await app.stop();
    }
  });

  it("status gives the time a standby took over as its 'active since', not when it connected", async () => {
    const app = await TestApp.start();
    try {
      const { active, standby } = await activeAndStandby(app);
      // The standby has been waiting a while before the active worker dies.
      await sleep(1_500);
      const killedAt = Date.now();
      await kill(active, 'SIGKILL');
      const statuses = await eventually(
        async () => {
          const list = await projectionStatus(app.pool, app.services.store);
          return list.every((s) => s.active?.worker === standby.name) && list;
        },
        5_000,
        () => 'the standby did not take over',
      );
      for (const s of statuses) {
        const since = Date.parse(s.active?.since ?? '');
        expect(since, `${s.projection}: active since ${s.active?.since}, worker killed at ${new Date(killedAt).toISOString()}`).to.be.at.least(killedAt - 250);
      }
    } finally {
      await app.stop();
    }
  });
});
