import { gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { maxItemContainers, maxItemValues } from '../src/ingest/item-size.js';
import pg from 'pg';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { sleep, until } from './support/eventually.js';
import { nodeFlagsOf } from '../src/node-flags.js';
import { ServiceProcess } from './support/service-process.js';
import { sample } from './support/metrics.js';

const adminToken = 'memory-test-admin';
/** Too small for the flood's backlog read as one page of events (144 MB), whatever their size, as it once was. */
const heapMiB = 128;
const clients = 4;
const itemsPerClient = 36;

interface Flooded {
  started: ServiceProcess;
  base: string;
  account: { licenseCode: string; accessToken: string };
}

/** The service started on `databaseUrl` with `nodeFlags` (handed to `onStarted` at once, to be stopped), healthy, with an account to flood. */
async function startFlooded(databaseUrl: string, env: Record<string, string>, nodeFlags: string[], onStarted: (started: ServiceProcess) => void): Promise<Flooded> {
  const started = ServiceProcess.start('main', { DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken, ...env }, { nodeFlags });
  onStarted(started);
  await started.waitForHealth(30_000);
  const base = started.base;
  const created = await fetch(`${base}/admin/v1/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'flood' }),
  });
  return { started, base, account: (await created.json()) as Flooded['account'] };
}

/** The highest of the service's memory samples from /metrics, read every 100 ms until stopped. */
function watchMemory(started: ServiceProcess, base: string) {
  const peaks = { rss: 0, heapUsed: 0, heapTotal: 0 };
  let sampling = true;
  const sampler = (async () => {
    while (sampling && started.running) {
      const page = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
      peaks.rss = Math.max(peaks.rss, sample(page, 'process_resident_memory_bytes') ?? 0);
      peaks.heapUsed = Math.max(peaks.heapUsed, sample(page, 'nodejs_heap_size_used_bytes') ?? 0);
      peaks.heapTotal = Math.max(peaks.heapTotal, sample(page, 'nodejs_heap_size_total_bytes') ?? 0);
      await sleep(100);
    }
  })();
  return {
    peaks,
    /** The peaks so far, then counting afresh. */
    restart: () => {
      const before = { ...peaks };
      Object.assign(peaks, { rss: 0, heapUsed: 0, heapTotal: 0 });
      return before;
    },
    stop: async () => {
      sampling = false;
      await sampler;
    },
  };
}

/** POSTs `body` to /events as the account; the reply's status, 0 when the connection failed. */
async function postEvent({ base, account }: Flooded, body: string): Promise<number> {
  return fetch(`${base}/v1/accounts/${account.licenseCode}/events`, {
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
}

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
    const flooded = await startFlooded(database.url, {}, [`--max-old-space-size=${heapMiB}`], (started) => (service = started));
    const { started } = flooded;
    const memory = watchMemory(started, flooded.base);

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
          const status = await postEvent(flooded, JSON.stringify({ userId: `u${c}`, eventName: 'flood', eventData: { blob, i } }));
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    const floodSeconds = (Date.now() - floodStart) / 1000;
    const floodPeak = memory.restart();
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
      // Until all are projected, or the service has stopped (which the assertions below then report).
      await until(
        async () => {
          if (!started.running) return true;
          projected = (await client.query<{ n: number }>("SELECT count(*)::int AS n FROM user_events WHERE event_name = 'flood'")).rows[0]?.n ?? 0;
          return projected === accepted;
        },
        60_000,
        () => `${projected} of the ${accepted} items accepted are projected`,
        100,
      );
      const catchUpSeconds = (Date.now() - catchUpStart) / 1000;
      await memory.stop();
      const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
      console.log(
        `      ${accepted} items of 1 MB accepted in ${floodSeconds.toFixed(1)} s (peak RSS ${mib(floodPeak.rss)} MiB, heap used ${mib(floodPeak.heapUsed)} MiB); ` +
          `projected in ${catchUpSeconds.toFixed(1)} s (peak RSS ${mib(memory.peaks.rss)} MiB, heap used ${mib(memory.peaks.heapUsed)} MiB)`,
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
    const flooded = await startFlooded(database.url, { INGEST_RATE_LIMIT: '0' }, flags, (started) => (service = started));
    const { started } = flooded;
    const memory = watchMemory(started, flooded.base);

    // As many keys as an item may hold, each with a string: 1 MB bodies that are many objects' worth.
    const eventData: Record<string, string> = {};
    for (let k = 0; k < 4_900; k += 1) eventData[`k${k}`] = `${k}`.padEnd(200, '.');
    const body = JSON.stringify({ userId: 'u1', eventName: 'flood', eventData });
    const statuses = new Map<number, number>();
    const until = Date.now() + 8_000;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (Date.now() < until) {
          const status = await postEvent(flooded, body);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    await memory.stop();
    const { rss: peakRss, heapTotal: peakHeapTotal } = memory.peaks;
    const mib = 2 ** 20;
    console.log(`      ${JSON.stringify([...statuses])} (status, replies); peak RSS ${(peakRss / mib).toFixed(0)} MiB, heap total ${(peakHeapTotal / mib).toFixed(0)} MiB`);
    expect(started.running, started.stderr).to.equal(true);
    expect([...statuses.keys()].filter((s) => ![200, 503].includes(s)), JSON.stringify([...statuses])).to.deep.equal([]);
    expect(statuses.get(200) ?? 0).to.be.greaterThan(0);
    // Node's defaults let this flood grow the heap past 330 MiB; the flags keep it under the limit.
    expect(peakHeapTotal / mib).to.be.below(256 + 16);
    expect(peakRss / mib).to.be.below(512);
  });

  it('as `npm start` runs it, bulk bodies that parse into millions of arrays are refused, the widest allowed stay within the heap, and another account is served throughout', async () => {
    const flooded = await startFlooded(database.url, { INGEST_RATE_LIMIT: '0' }, nodeFlagsOf('start'), (started) => (service = started));
    const { started, base } = flooded;
    const second = (await (
      await fetch(`${base}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: '{"name":"second"}' })
    ).json()) as Flooded['account'];
    const bystander = (await (
      await fetch(`${base}/admin/v1/accounts`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: '{"name":"bystander"}' })
    ).json()) as Flooded['account'];
    const memory = watchMemory(started, base);

    // 5 MB of `[],` in 100 events: 1.7 million arrays once parsed, 8 kB gzipped.
    const wide = (arrays: number, numbers: number) =>
      gzipSync('[' + Array.from({ length: 100 }, (_, i) => `{"userId":"u${i}","eventName":"wide","eventData":{"a":[${Array(arrays).fill('[]').join(',')}],"n":[${Array(numbers).fill('0').join(',')}]}}`).join(',') + ']');
    const pastTheLimits = wide(17_000, 0);
    // At the limits: each item holds 1,000 objects and arrays and close to 10,000 values.
    const atTheLimits = wide(maxItemContainers - 4, maxItemValues - 2_000);
    const postBulk = (account: Flooded['account'], body: Buffer) =>
      fetch(`${base}/v1/accounts/${account.licenseCode}/events/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body,
      }).then(
        async (r) => ({ status: r.status, text: await r.text() }),
        () => ({ status: 0, text: '' }),
      );

    const statuses = new Map<string, number>();
    const note = (kind: string, status: number) => statuses.set(`${kind} ${status}`, (statuses.get(`${kind} ${status}`) ?? 0) + 1);
    const until = Date.now() + 8_000;
    const attack = [flooded.account, second].flatMap((account) => [
      ...Array.from({ length: 3 }, async () => {
        while (Date.now() < until) {
          const reply = await postBulk(account, pastTheLimits);
          note('past', reply.status);
          if (reply.status === 413) expect(JSON.parse(reply.text).error).to.match(/^\[0\] holds more than 1,000 objects and arrays/);
        }
      }),
      ...Array.from({ length: 3 }, async () => {
        while (Date.now() < until) note('at', (await postBulk(account, atTheLimits)).status);
      }),
    ]);
    const served = (async () => {
      while (Date.now() < until) note('bystander', await postEvent({ ...flooded, account: bystander }, '{"userId":"b","eventName":"still here"}'));
    })();
    await Promise.all([...attack, served]);
    await memory.stop();
    const mib = 2 ** 20;
    console.log(`      ${JSON.stringify([...statuses])} (kind status, replies); peak RSS ${(memory.peaks.rss / mib).toFixed(0)} MiB, heap used ${(memory.peaks.heapUsed / mib).toFixed(0)} MiB, heap total ${(memory.peaks.heapTotal / mib).toFixed(0)} MiB`);
    expect(started.running, started.stderr).to.equal(true);
    expect([...statuses.keys()].filter((key) => !['past 413', 'past 503', 'at 200', 'at 503', 'bystander 200'].includes(key)), JSON.stringify([...statuses])).to.deep.equal([]);
    expect(statuses.get('at 200') ?? 0).to.be.greaterThan(0);
    expect(statuses.get('bystander 200') ?? 0).to.be.greaterThan(10);
    expect(memory.peaks.heapTotal / mib).to.be.below(256 + 16);
    expect(memory.peaks.rss / mib).to.be.below(512);
  });

  it('as `npm start` runs it, concurrent reads of 100 planted 1 MB events (track lookup, lead events, timeline) keep the heap under its limit while another account is served', async () => {
    const flags = nodeFlagsOf('start');
    const flooded = await startFlooded(database.url, { INGEST_RATE_LIMIT: '0' }, flags, (started) => (service = started));
    const { started, base, account } = flooded;
    const admin = { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' };
    const token = await fetch(`${base}/admin/v1/accounts/${account.licenseCode}/tokens`, { method: 'POST', headers: admin, body: JSON.stringify({ label: 'shop', scope: 'ingest' }) });
    const ingestOnly = { ...flooded, account: { ...account, accessToken: ((await token.json()) as { accessToken: string }).accessToken } };
    const other = (await (await fetch(`${base}/admin/v1/accounts`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'other' }) })).json()) as Flooded['account'];

    const blob = 'x'.repeat(1_000_000);
    const plant = async (body: unknown): Promise<void> => {
      for (let status = 0; status !== 200; ) {
        status = await postEvent(ingestOnly, JSON.stringify(body));
        expect([200, 503], `planting: ${status}`).to.include(status);
      }
    };
    const users = await fetch(`${base}/v1/accounts/${account.licenseCode}/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingestOnly.account.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'big', attributes: {} }),
    });
    expect(users.status).to.equal(200);
    for (let i = 0; i < 100; i += 1) await plant({ userId: 'big', eventName: 'large', eventData: { blob, i } });
    const last = await fetch(`${base}/v1/accounts/${account.licenseCode}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ingestOnly.account.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'big', eventName: 'last', eventData: {} }),
    });
    const trackID = ((await last.json()) as { response: { trackID: string } }).response.trackID;
    const read = (path: string, of = account) =>
      fetch(`${base}/admin/v1/accounts/${of.licenseCode}/${path}`, { headers: { authorization: `Bearer ${of.accessToken}` } }).then(
        async (r) => ({ status: r.status, bytes: (await r.arrayBuffer()).byteLength }),
        () => ({ status: 0, bytes: 0 }),
      );
    for (const path of [`track/${trackID}`, 'leads/big/events?limit=500']) {
      let status = 0;
      await until(async () => (status = (await read(path)).status) === 200, 60_000, () => `${path} still answers ${status}`, 100);
    }

    const memory = watchMemory(started, base);
    const paths = [`track/${trackID}`, 'leads/big/events?limit=500', 'leads/big/timeline?limit=500'];
    const replies: { status: number; bytes: number }[] = [];
    const served: number[] = [];
    for (let round = 0; round < 2; round += 1) {
      await Promise.all([
        ...Array.from({ length: 12 }, async (_, i) => replies.push(await read(paths[i % paths.length] as string))),
        (async () => {
          served.push(await postEvent({ ...flooded, account: other }, JSON.stringify({ userId: 'o', eventName: 'small', eventData: {} })));
          served.push((await read('live', other)).status);
        })(),
      ]);
    }
    await memory.stop();
    const mib = 2 ** 20;
    console.log(`      ${replies.length} reads of ${paths.length} kinds, the largest reply ${(Math.max(...replies.map((r) => r.bytes)) / mib).toFixed(2)} MiB; peak RSS ${(memory.peaks.rss / mib).toFixed(0)} MiB, heap used ${(memory.peaks.heapUsed / mib).toFixed(0)} MiB, heap total ${(memory.peaks.heapTotal / mib).toFixed(0)} MiB`);
    expect(started.running, started.stderr).to.equal(true);
    expect(replies.map((r) => r.status)).to.deep.equal(replies.map(() => 200));
    expect(Math.max(...replies.map((r) => r.bytes)) / mib).to.be.below(1.01);
    expect(served).to.deep.equal([200, 200, 200, 200]);
    expect(memory.peaks.heapTotal / mib).to.be.below(256 + 16);
    expect(memory.peaks.rss / mib).to.be.below(512);
  });
});
