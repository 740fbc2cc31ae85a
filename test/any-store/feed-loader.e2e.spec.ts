import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import { projectRoot } from '../../src/paths.js';
import { TestApp, type Credentials } from '../support/app.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { eventually, sleep } from '../support/eventually.js';

const node = join(projectRoot, 'node_modules', '.bin', 'node');
const loaderScript = join(projectRoot, 'docs', 'examples', 'feed-loader.mjs');

describe('the example warehouse loader of docs/export.md, on the feed (e2e, on the store under test)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let other: TestApp;
  let acme: Credentials;
  let warehouse: TestDatabase;
  let db: Pool;

  before(async () => {
    app = await TestApp.start({}, { erasureRunner: false });
    // A second process of the service on the same database, appending at the same time.
    other = await TestApp.start({}, { database: app.database, erasureRunner: false });
    acme = await app.account('Acme');
    warehouse = await freshDatabase();
    // The service's pool: a session the drop below ends while its client is still closing must not
    // surface as an uncaught error (pg-pool's end() resolves before its sockets close).
    db = createPool(warehouse.url, 2);
  });
  after(async () => {
    await db.end();
    await warehouse.drop();
    await other.stop();
    await app.stop();
  });

  function startLoader(): ChildProcess {
    const env = { ...process.env, TRACKING_URL: app.baseUrl, TRACKING_LICENSE_CODE: acme.licenseCode, TRACKING_ACCESS_TOKEN: acme.accessToken, LOADER_DATABASE_URL: warehouse.url };
    return spawn(node, [loaderScript], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  }

  it('loads every acknowledged event once, killed with SIGKILL at random moments while two processes append', async () => {
    const acknowledged = new Set<string>();
    let appending = true;
    // Four writers a process, each sending one item at a time: profiles and events.
    const writers = [app, other].flatMap((via, p) =>
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; appending; i += 1) {
          const body = i % 3 === 0 ? { userId: `u-${p}-${w}-${i}`, attributes: { i } } : { userId: `u-${p}-${w}`, eventName: 'Tick', eventData: { i } };
          const reply = await via.ingest<{ response: { trackID: string } }>(acme, i % 3 === 0 ? 'users' : 'events', body);
          if (reply.status === 200) acknowledged.add(reply.body.response.trackID);
        }
      }),
    );
    let errors = '';
    let kills = 0;
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      const loader = startLoader();
      loader.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
      const exited = new Promise((resolve) => loader.on('exit', resolve));
      await sleep(300 + Math.random() * 900);
      loader.kill('SIGKILL');
      await exited;
      kills += 1;
    }
    appending = false;
    await Promise.all(writers);
    const loader = startLoader();
    loader.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString('utf8')));
    const exited = new Promise((resolve) => loader.on('exit', resolve));
    try {
      await eventually(
        async () => {
          const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM tracking_events').catch(() => ({ rows: [{ n: 0 }] }));
          return (rows[0]?.n ?? 0) >= acknowledged.size ? true : undefined;
        },
        60_000,
        () => `the loader never caught up with ${acknowledged.size} events`,
      );
    } finally {
      loader.kill('SIGTERM');
      await exited;
    }
    expect(kills).to.be.at.least(5);
    expect(acknowledged.size).to.be.above(200);
    const loaded = await db.query<{ track_id: string }>('SELECT track_id FROM tracking_events');
    expect(new Set(loaded.rows.map((row) => row.track_id))).to.deep.equal(acknowledged);
    // Each load counts what the feed gave it: a page given twice would count its events twice.
    const { rows } = await db.query<{ given: number; kept: number }>('SELECT (SELECT sum(events)::int FROM tracking_feed_loads) AS given, (SELECT count(*)::int FROM tracking_events) AS kept');
    expect(rows[0]).to.deep.equal({ given: acknowledged.size, kept: acknowledged.size });
    expect(errors).to.equal('');
  });
});
