import { expect } from 'chai';
import { servedApp, TestApp, type Credentials } from '../support/app.js';
import { accountRefs } from '../support/id-refs.js';
import { eventsOfType, itemError, queued, requestError } from '../support/replies.js';

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

describe('Idempotency-Key replays (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  it('replays the recorded reply to a repeat, running nothing, and refuses the key with another body', async () => {
    const merge = { userId: 'u9', anonymousId: 'a1', attributes: {} };
    const first = await app.ingest(account, 'users', merge, withKey('K1'));
    const trackId = queued(first);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);

    const repeat = await app.ingest(account, 'users', merge, withKey('K1'));
    expect(repeat.status).to.equal(200);
    expect(repeat.body).to.deep.equal(first.body);
    expect(repeat.headers.get('idempotent-replayed')).to.equal('true');

    const other = await app.ingest(account, 'users', { userId: 'u9', anonymousId: 'a2', attributes: { newkey: 5 } }, withKey('K1'));
    expect(requestError(other, 422)).to.contain('Idempotency-Key');

    // a2 was not merged, and newkey was not registered: both are still free.
    const { rows: merges } = await app.pool.query('SELECT anonymous_id FROM identity_merges');
    expect(merges).to.deep.equal([{ anonymous_id: 'a1' }]);
    queued(await app.ingest(account, 'users', { userId: 'u10', anonymousId: 'a2', attributes: { newkey: 'text' } }));
    const mergedEvents = await eventsOfType(app, 'ProfilesMerged');
    expect(mergedEvents.map((e) => e.data.anonymousId)).to.deep.equal(['a1', 'a2']);
    expect(mergedEvents[0]?.metadata.trackId).to.equal(trackId);
  });

  it('lets only one of two concurrent requests with one key and different bodies through', async () => {
    const replies = await Promise.all([
      app.ingest(account, 'users/bulk', [{ userId: 'alice', attributes: {} }], withKey('K2')),
      app.ingest(account, 'users/bulk', [{ userId: 'bob', attributes: {} }, { userId: 'carol', attributes: {} }], withKey('K2')),
    ]);
    expect(replies.map((r) => r.status).sort()).to.deep.equal([200, 422]);
    const stored = (await app.events()).map((e) => e.data.userId);
    expect(stored).to.have.length(replies[0]?.status === 200 ? 1 : 2);
  });

  it('gives concurrent requests with one key one trackID and one stored event', async () => {
    const replies = await Promise.all(
      Array.from({ length: 12 }, () => app.ingest(account, 'events', { userId: 'u1', eventName: 'paid' }, withKey('order-7'))),
    );
    const trackIds = new Set(replies.map((reply) => queued(reply)));
    expect(trackIds.size).to.equal(1);
    expect(await app.events()).to.have.length(1);
  });

  it('does not record a rejected item: the corrected retry with the same key is accepted', async () => {
    const rejected = await app.ingest(account, 'productsevents', { productId: '', eventName: 'view' }, withKey('pe-1'));
    expect(itemError(rejected)).to.equal('productId cannot be empty');
    const corrected = await app.ingest(account, 'productsevents', { productId: 'p1', eventName: 'view' }, withKey('pe-1'));
    queued(corrected);
    expect(await eventsOfType(app, 'ProductEventTracked')).to.have.length(1);
  });

  it('derives the merge event id from the trackID and the pseudonym of the anonymous id', async () => {
    const trackId = queued(await app.ingest(account, 'users', { userId: 'u1', anonymousId: 'a1', attributes: {} }));
    const [merge] = await eventsOfType(app, 'ProfilesMerged');
    const { v5 } = await import('uuid');
    const refs = await accountRefs(app, account);
    expect(merge?.event_id).to.equal(v5(`ProfilesMerged\n${refs.anonymous('a1')}`, trackId));
  });
});
