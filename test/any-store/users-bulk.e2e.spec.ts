import { expect } from 'chai';
import { servedApp, TestApp, type Credentials } from '../support/app.js';
import { bulkResults, eventsOfType, requestError, storesNothing, uuidPattern } from '../support/replies.js';

describe('users bulk (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  const users = (count: number): Record<string, unknown>[] =>
    Array.from({ length: count }, (_, i) => ({ userId: `u-${i}`, attributes: { rank: i } }));

  it('answers 200 with one result per element in input order, valid and invalid mixed', async () => {
    const reply = await app.ingest(account, 'users/bulk', [
      { userId: 'u-1', attributes: {} },
      { firstName: 'no id', attributes: {} },
      { anonymousId: 'anon-2', attributes: { plan: 'free' } },
      { userId: 'u-3', attributes: 'not an object' },
      { userId: 'u-4', birth_date: 'last year', attributes: {} },
      { userId: 'null', attributes: {} },
      { userId: 'u-6', attributes: { plan: 'pro' } },
    ]);
    const results = bulkResults(reply);
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'error', 'queued', 'error', 'error', 'error', 'queued']);
    for (const result of results) {
      if (result.status === 'queued') {
        expect(result).to.have.all.keys('status', 'trackID');
        expect(result.trackID).to.match(uuidPattern);
      } else {
        expect(result).to.have.all.keys('status', 'message');
        expect(result.message).to.be.a('string').that.has.length.above(0);
      }
    }
    expect(results[1]?.message).to.match(/userId|anonymousId/);
    expect(results[3]?.message).to.contain('attributes');
    expect(results[4]?.message).to.contain('birth_date');
    expect(results[5]?.message).to.contain('userId');
  });

  it('stores exactly the valid elements, one UserUpserted per queued trackID in input order', async () => {
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u-1', attributes: {} },
        { userId: 'u-2', attributes: { bad: null } },
        { anonymousId: 'anon-3', attributes: {} },
        { userId: 'u-4', children: 'two', attributes: {} },
        { userId: 'u-5', attributes: {} },
      ]),
    );
    const queuedIds = results.filter((r) => r.status === 'queued').map((r) => r.trackID);
    expect(queuedIds).to.have.length(3);
    const stored = await app.events();
    expect(stored.map((e) => e.event_id)).to.deep.equal(queuedIds);
    expect(stored.map((e) => e.data.userId ?? e.data.anonymousId)).to.deep.equal(['u-1', 'anon-3', 'u-5']);
  });

  it('accepts 100 elements', async () => {
    const results = bulkResults(await app.ingest(account, 'users/bulk', users(100)));
    expect(results).to.have.length(100);
    expect(results.every((r) => r.status === 'queued')).to.equal(true);
    expect(new Set(results.map((r) => r.trackID)).size).to.equal(100);
    expect(await eventsOfType(app, 'UserUpserted')).to.have.length(100);
  });

  it('rejects 101 elements as a whole with 400 form A, storing nothing', async () => {
    const message = await storesNothing(app, async () => requestError(await app.ingest(account, 'users/bulk', users(101)), 400));
    expect(message).to.contain('100');
  });

  for (const [label, body] of [
    ['an object', { userId: 'u-1', attributes: {} }],
    ['a string', 'u-1'],
    ['null', null],
    ['an empty array', []],
  ] as const) {
    it(`rejects a body that is ${label} with 400 form A`, async () => {
      await storesNothing(app, async () => requestError(await app.ingest(account, 'users/bulk', body), 400));
    });
  }

  it('registers a key type from one element and rejects another element of the same bulk with the other type', async () => {
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u-1', attributes: { level: 3 } },
        { userId: 'u-2', attributes: { level: 'gold' } },
        { userId: 'u-3', attributes: { level: 4 } },
      ]),
    );
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'error', 'queued']);
    expect(results[1]?.message).to.contain('level').and.contain('number').and.contain('string');
    expect((await eventsOfType(app, 'UserUpserted')).map((e) => e.data.userId)).to.deep.equal(['u-1', 'u-3']);
  });

  it('rejects an element whose type conflicts with a type registered by an earlier request', async () => {
    bulkResults(await app.ingest(account, 'users/bulk', [{ userId: 'u-1', attributes: { level: 'gold' } }]));
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u-2', attributes: { level: 2 } },
        { userId: 'u-3', attributes: { level: 'silver' } },
      ]),
    );
    expect(results.map((r) => r.status)).to.deep.equal(['error', 'queued']);
    expect(results[0]?.message).to.contain('level');
  });

  it('does not let an element rejected for a merge conflict fix the type of a key for later elements', async () => {
    bulkResults(await app.ingest(account, 'users/bulk', [{ userId: 'u-0', anonymousId: 'anon-1', attributes: {} }]));
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u-1', anonymousId: 'anon-1', attributes: { level: 3 } },
        { userId: 'u-2', attributes: { level: 'gold' } },
      ]),
    );
    expect(results.map((r) => r.status)).to.deep.equal(['error', 'queued']);
    expect(results[0]?.message).to.contain('anon-1');
    const { rows } = await app.pool.query<{ type: string }>("SELECT type FROM attribute_types WHERE key = 'level'");
    expect(rows.map((r) => r.type)).to.deep.equal(['string']);
  });

  it('merges within a bulk and rejects a second merge of the same anonymousId into another user', async () => {
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u-1', anonymousId: 'anon-1', attributes: {} },
        { userId: 'u-2', anonymousId: 'anon-1', attributes: {} },
      ]),
    );
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'error']);
    expect(results[1]?.message).to.contain('anon-1');
    const merges = await eventsOfType(app, 'ProfilesMerged');
    expect(merges.map((e) => e.data.userId)).to.deep.equal(['u-1']);
    expect(merges[0]?.metadata.trackId).to.equal(results[0]?.trackID);
  });
});
