import { expect } from 'chai';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { nodeFlagsOf } from '../src/node-flags.js';
import { ServiceProcess } from './support/service-process.js';
import { sample } from './support/metrics.js';

const adminToken = 'memory-test-admin';
/** Too small for the flood's backlog read as one page of events (144 MB), whatever their size, as it once was. */
const heapMiB = 128;
const clients = 4;
const itemsPerClient = 36;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('memory under a flood of maximum-size items (e2e)', function () {
  this.timeout(120_000);
  let database: TestDatabase;
  let service: ServiceProcess | null = null;

  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await service?.kill();
    service = null;
    await database.drop();
  });

  it(`keeps the service within a ${heapMiB} MiB heap while a backlog of 1 MB events is projected, and every accepted item reaches the read models`, async () => {
    const started = ServiceProcess.start('main', { DATABASE_URL: database.url, ADMIN_TOKEN: adminToken }, { nodeFlags: [`--max-old-space-size=${heapMiB}`] });
    service = started;
    await started.waitForHealth(30_000);
    const base = started.base;
    const created = await fetch(`${base}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'flood' }),
    });
    const account = (await created.json()) as { licenseCode: string; accessToken: string };

    let peakRss = 0;
    let peakHeap = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling && started.running) {
        const page = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
        peakRss = Math.max(peakRss, sample(page, 'process_resident_memory_bytes') ?? 0);
        peakHeap = Math.max(peakHeap, sample(page, 'nodejs_heap_size_used_bytes') ?? 0);
        await sleep(100);
      }
    })();

    // A transaction left open holds every later event back from the catch-up read: the projections
    // then meet the whole flood as one backlog, as after a restart or a stalled worker.
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT pg_current_xact_id()');

    const floodStart = Date.now();
    const statuses = new Map<number, number>();
    const blob = 'x'.repeat(1_000_000);
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = 0; i < itemsPerClient; i += 1) {
          const body = JSON.stringify({ userId: `u${c}`, eventName: 'flood', eventData: { blob, i } });
          const status = await fetch(`${base}/v1/accounts/${account.licenseCode}/events`, {
            method: 'POST',
            headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
            body,
          }).then(
            async (r) => {
              await r.arrayBuffer();
              return r.status;
            },
            () => 0,
          );
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    const floodSeconds = (Date.now() - floodStart) / 1000;
    const floodPeak = { rss: peakRss, heap: peakHeap };
    peakHeap = 0;
    peakRss = 0;
    const catchUpStart = Date.now();
    await holder.query('COMMIT');
    await holder.end();

    const accepted = statuses.get(200) ?? 0;
    // 503 and 429 are honest answers under load; nothing else, and no dropped connection (0).
    expect([...statuses.keys()].filter((s) => ![200, 429, 503].includes(s)), JSON.stringify([...statuses])).to.deep.equal([]);
    expect(accepted).to.be.greaterThan(clients * itemsPerClient * 0.9);

    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      let projected = -1;
      for (let i = 0; i < 600 && projected !== accepted && started.running; i += 1) {
        projected = (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM user_events WHERE event_name = 'flood'")).rows[0]?.n ?? 0;
        if (projected !== accepted) await sleep(100);
      }
      const catchUpSeconds = (Date.now() - catchUpStart) / 1000;
      sampling = false;
      await sampler;
      const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
      console.log(
        `      ${accepted} items of 1 MB accepted in ${floodSeconds.toFixed(1)} s (peak RSS ${mib(floodPeak.rss)} MiB, heap used ${mib(floodPeak.heap)} MiB); ` +
          `projected in ${catchUpSeconds.toFixed(1)} s (peak RSS ${mib(peakRss)} MiB, heap used ${mib(peakHeap)} MiB)`,
      );
      expect(started.running, started.stderr).to.equal(true);
      expect(projected).to.equal(accepted);
    } finally {
      await client.end();
    }
  });

  it('as `npm start` runs it (its heap flags, the default body budget), a flood of 1 MB many-key bodies on 64 connections is answered 200 or 503 and the heap stays under its limit', async () => {
    const flags = nodeFlagsOf('start');
    expect(flags).to.include('--max-old-space-size=256');
    const started = ServiceProcess.start('main', { DATABASE_URL: database.url, ADMIN_TOKEN: adminToken, INGEST_RATE_LIMIT: '0' }, { nodeFlags: flags });
    service = started;
    await started.waitForHealth(30_000);
    const base = started.base;
    const created = await fetch(`${base}/admin/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'flood' }),
    });
    const account = (await created.json()) as { licenseCode: string; accessToken: string };

    let peakRss = 0;
    let peakHeapTotal = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling && started.running) {
        const page = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
        peakRss = Math.max(peakRss, sample(page, 'process_resident_memory_bytes') ?? 0);
        peakHeapTotal = Math.max(peakHeapTotal, sample(page, 'nodejs_heap_size_total_bytes') ?? 0);
        await sleep(100);
      }
    })();

    // Many small keys cost the heap far more than their bytes: the costliest body per byte.
    const eventData: Record<string, number> = {};
    for (let k = 0; k < 40_000; k += 1) eventData[`k${k}`] = k;
    const body = JSON.stringify({ userId: 'u1', eventName: 'flood', eventData });
    const statuses = new Map<number, number>();
    const until = Date.now() + 8_000;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (Date.now() < until) {
          const status = await fetch(`${base}/v1/accounts/${account.licenseCode}/events`, {
            method: 'POST',
            headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
            body,
          }).then(
            async (r) => {
              await r.arrayBuffer();
              return r.status;
            },
            () => 0,
          );
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    sampling = false;
    await sampler;
    const mib = 2 ** 20;
    console.log(`      ${JSON.stringify([...statuses])} (status, replies); peak RSS ${(peakRss / mib).toFixed(0)} MiB, heap total ${(peakHeapTotal / mib).toFixed(0)} MiB`);
    expect(started.running, started.stderr).to.equal(true);
    expect([...statuses.keys()].filter((s) => ![200, 503].includes(s)), JSON.stringify([...statuses])).to.deep.equal([]);
    expect(statuses.get(200) ?? 0).to.be.greaterThan(0);
    // Node's defaults let this flood grow the heap past 330 MiB; the flags keep it under the limit.
    expect(peakHeapTotal / mib).to.be.below(256 + 16);
    expect(peakRss / mib).to.be.below(512);
  });
});
