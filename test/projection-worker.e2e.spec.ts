import { expect } from 'chai';
import { hostname } from 'node:os';
import { liveWorkers } from '../projections/runner/claims-sql.js';
import { projections, type Projection } from '../projections/index.js';
import { rebuildProjections, type RebuildResult } from '../projections/runner/rebuild.js';
import { projectionStatus, type ProjectionStatus } from '../projections/runner/status.js';
import { TestApp } from './support/app.js';
import { eventually, sleep, within } from './support/eventually.js';
import {
  appliedOf,
  checkpointOf,
  eventCount,
  expectSameReadModels,
  ids,
  independentReplay,
  inParallel,
  liveRound,
  readApi,
  readModels,
  rowCounts,
  send,
  snapshot,
  trackIndexTypes,
  variedWorkload,
  type LeadBody,
} from './support/projection-harness.js';
import { kill, startWorker, stopStartedWorkers, waitMidBatch } from './support/worker-processes.js';
import { createLogger } from '../src/logger.js';

/**
 * Projection workers end to end: a rebuild gives the live read models row for row, and a worker
 * process killed mid-batch neither loses nor doubles an effect. (Several workers sharing the
 * parts: projection-sharing.e2e.spec.ts.)
 */

const silent = createLogger('silent');

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

      // Replayed in this process (no worker is alive), in batches of 7.
      for (const result of await rebuildProjections(app.pool, app.services.store, projections, { log: silent, batchSize: 7, pollMs: 20 })) {
        const projection = projections.find((p) => p.name === result.projection) as Projection;
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

      // A rebuild with nothing coming in: exactly the rows the live workers wrote. It loads the
      // tables without their secondary indexes and makes them again at the end.
      const indexesOf = async (): Promise<string[]> =>
        (
          await app.pool.query<{ def: string }>('SELECT indexdef AS def FROM pg_indexes WHERE tablename = ANY ($1) ORDER BY indexname', [projections.flatMap((p) => p.tables)])
        ).rows.map((r) => r.def);
      const indexesBefore = await indexesOf();
      expect(indexesBefore.filter((def) => !/UNIQUE/.test(def)), 'secondary indexes of the read models').to.have.length.above(5);
      const quiet = await rebuildProjections(app.pool, app.services.store, projections, { log: silent });
      expect(await indexesOf(), 'indexes after the rebuild').to.deep.equal(indexesBefore);
      expect((await app.pool.query('SELECT * FROM projection_rebuild_indexes')).rows, 'indexes left to make again').to.deep.equal([]);
      for (const result of quiet) expect(result.ranHere, 'the in-process worker rebuilds').to.equal(false);
      await app.projected();
      expectSameReadModels(await snapshot(app.pool), live, 'rebuilt read models vs the live ones');
      const quietFinished = Math.max(...(await Promise.all(projections.map(async (p) => (await checkpointOf(app.pool, p)).rebuild_finished_at?.getTime() ?? 0))));

      // A rebuild while clients keep posting, from before it is asked for until after it is done,
      // with 50 ms between rounds (27 items each): what is tested is the rebuild's outcome, not
      // whether the machine applies batches of 25 faster than it can post without a pause.
      let rebuilding = true;
      let rounds = 0;
      const feeding = (async () => {
        while (rebuilding || rounds < 3) {
          await liveRound(app, account, 'w1', rounds++);
          await sleep(50);
        }
      })().then(
        () => null,
        (error: unknown) => error,
      );
      // While it replays, the secondary indexes are set aside (and the reads go without them).
      let indexesSetAside = 0;
      const sampling = (async () => {
        while (rebuilding) {
          const { rows } = await app.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM projection_rebuild_indexes');
          indexesSetAside = Math.max(indexesSetAside, rows[0]?.n ?? 0);
          await sleep(20);
        }
      })();
      await sleep(30);
      let results: RebuildResult[];
      const progress: Record<string, { applied: number; target: number | null }[]> = {};
      try {
        results = await rebuildProjections(app.pool, app.services.store, projections, {
          log: silent,
          onProgress: (p, step) => (progress[p.name] ??= []).push(step),
        });
      } finally {
        rebuilding = false;
      }
      const feedError = await feeding;
      if (feedError) throw feedError;
      await sampling;
      expect(indexesSetAside, 'secondary indexes set aside during the rebuild').to.be.above(5);
      expect(await indexesOf(), 'indexes after the rebuild under load').to.deep.equal(indexesBefore);
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
      const whole = await projectionStatus(app.pool, app.services.store);
      for (const [i, projection] of projections.entries()) {
        const events = await eventCount(app.pool, projection.eventTypes);
        const row = await checkpointOf(app.pool, projection);
        expect(row.rebuild_requested_at, `${projection.name}: rebuild still requested`).to.equal(null);
        expect(row.rebuild_started_at?.getTime(), `${projection.name}: rebuild started after the quiet one`).to.be.above(quietFinished);
        expect(row.rebuild_finished_at, `${projection.name}: rebuild finished`).to.be.an.instanceOf(Date);
        expect(await appliedOf(app.pool, projection), `${projection.name}: events applied`).to.equal(events);
        const result = results[i] as RebuildResult;
        expect(result.ranHere).to.equal(false);
        expect(result.events, `${projection.name}: events replayed by the time the rebuild caught up`).to.be.within(1, events);
        const steps = progress[projection.name] ?? [];
        expect(steps.at(-1)?.applied, `${projection.name}: last progress`).to.equal(result.events);
        const status = whole.projections.find((s) => s.projection === projection.name) as ProjectionStatus;
        expect(status.rebuild?.state, `${projection.name}: rebuild state`).to.equal('finished');
        expect(status.eventsApplied).to.equal(events);
        expect(status.lagEvents).to.equal(0);
      }
      // The app's worker alone, holding every part.
      expect(whole.workers.map((w) => w.worker)).to.deep.equal([`${process.pid}@${hostname()}`]);
      expect(whole.parts.every((p) => p.owner?.worker === `${process.pid}@${hostname()}`)).to.equal(true);
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
        (await app.pool.query<{ n: number }>('SELECT coalesce(sum(events_applied), 0)::int AS n FROM projection_account_checkpoints')).rows[0]?.n ?? 0;

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
      // The userId is sealed in the stored event: counted on the events opened, as the service reads them.
      const upserts: Record<string, number> = {};
      for (const event of await app.events()) {
        const userId = event.event_type === 'UserUpserted' ? event.data.userId : undefined;
        if (typeof userId === 'string') upserts[userId] = (upserts[userId] ?? 0) + 1;
      }
      const { rows: leads } = await app.pool.query<{ id: string; n: number }>(
        "SELECT profile_id AS id, version AS n FROM leads WHERE profile_kind = 'user' ORDER BY 1",
      );
      expect(Object.keys(upserts)).to.have.length(160);
      expect(Object.fromEntries(leads.map((lead) => [lead.id, lead.n])), 'lead versions vs upserts per user').to.deep.equal(upserts);
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
        expect(await appliedOf(app.pool, p), `${p.name}: events applied`).to.equal(totals.get(p.name));
      }

      // And row for row what a rebuild in this process (no worker is alive) gives.
      const afterKills = await snapshot(app.pool);
      // The killed workers' entries expire with their leases.
      await eventually(async () => (await app.pool.query<{ live: number }>(liveWorkers)).rows[0]?.live === 0, 15_000, () => 'worker entries still alive');
      for (const result of await rebuildProjections(app.pool, app.services.store, projections, { log: silent, batchSize: 333, pollMs: 20 })) {
        expect(result.ranHere, `${result.projection} rebuilt in this process`).to.equal(true);
        expect(result.events).to.equal(totals.get(result.projection));
      }
      expectSameReadModels(await snapshot(app.pool), afterKills, 'read models after the kills vs a rebuild');
    } finally {
      await app.stop();
    }
  });
});
