import { expect } from 'chai';
import { createPool, type Pool } from '../src/db/pool.js';
import { accountsBehind, appliedByProjection, caughtUp, forgetProjected } from '../bench/progress.js';
import { servedApp, TestApp, type Credentials } from './support/app.js';

/**
 * The bench times every catch-up, and waits between its scenarios, by when the projections are
 * caught up, read from the accounts' cursors; and it empties the projections between the runs of
 * its workers group. Were either wrong, the bench would time the wrong thing: stop early, never
 * stop, or start the next run on read models already built.
 */
describe('bench: progress of the projections', function () {
  let app: TestApp;
  let account: Credentials;
  let db: Pool;
  servedApp((started) => ({ app, account } = started));
  // Ended in the test: the app's own afterEach drops the database.
  beforeEach(() => {
    // The service's pool: a session the drop ends while its client is still closing raises nothing.
    db = createPool(app.database.url, 2);
  });

  /** A projection worker beside the app, as another process would run it, until its read models are up to date. */
  async function projectAll(): Promise<void> {
    const worker = await TestApp.start({}, { database: app.database, projections: true });
    try {
      await worker.projected(20_000);
    } finally {
      await worker.stop();
    }
  }

  const leadsCount = async (): Promise<number> => Number((await db.query<{ n: string }>('SELECT count(*)::text AS n FROM leads')).rows[0]?.n);

  it('says behind until every account is applied by all four, and nothing is left once forgotten', async () => {
    try {
      await behindAppliedForgotten();
    } finally {
      await db.end();
    }
  });

  async function behindAppliedForgotten(): Promise<void> {
    const other = await app.account('other');
    for (const [who, n] of [[account, 3], [other, 2]] as const) {
      const reply = await app.ingest(who, 'users/bulk', Array.from({ length: n }, (_, i) => ({ userId: `u-${i}`, attributes: {} })));
      expect(reply.status).to.equal(200);
    }
    expect(await caughtUp(db)).to.equal(false);
    expect([...(await accountsBehind(db)).values()]).to.deep.equal([2, 2, 2, 2]);

    await projectAll();
    expect(await caughtUp(db)).to.equal(true);
    expect(await leadsCount()).to.equal(5);
    const applied = await appliedByProjection(db);
    expect(applied.get('leads')).to.equal(5);
    expect(applied.get('track-index')).to.equal(5);

    // A later event of one account: that account alone is behind again.
    expect((await app.ingest(other, 'users', { userId: 'u-late', attributes: {} })).status).to.equal(200);
    expect([...(await accountsBehind(db)).values()]).to.deep.equal([1, 1, 1, 1]);
    await projectAll();
    expect(await caughtUp(db)).to.equal(true);

    await forgetProjected(db);
    expect(await caughtUp(db)).to.equal(false);
    expect(await leadsCount()).to.equal(0);
    expect((await appliedByProjection(db)).size).to.equal(0);
    // Caught up again from nothing, as the first time.
    await projectAll();
    expect(await caughtUp(db)).to.equal(true);
    expect(await leadsCount()).to.equal(6);
    expect((await appliedByProjection(db)).get('track-index')).to.equal(6);
  }
});
