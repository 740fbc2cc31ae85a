import { expect } from 'chai';
import { servedApp, TestApp, type BulkReply, type Credentials, type SingleReply } from './support/app.js';
import { accountRefs } from './support/id-refs.js';

describe('durability and idempotency (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  it('every trackID answered 200 under concurrent load is stored, once', async () => {
    const requests = Array.from({ length: 240 }, (_, i) => {
      switch (i % 4) {
        case 0:
          return app.ingest<SingleReply>(account, 'users', { userId: `u${i % 17}`, attributes: { n: i } });
        case 1:
          return app.ingest<SingleReply>(account, 'events', { userId: `u${i % 17}`, eventName: 'load', eventData: { i } });
        case 2:
          return app.ingest<SingleReply>(account, 'products', { productId: `p${i % 5}`, properties: { i } });
        default:
          return app.ingest<SingleReply>(account, 'productsevents', { productId: `p${i % 5}`, userId: null, eventName: 'view' });
      }
    });
    const bulk = app.ingest<BulkReply>(
      account,
      'users/bulk',
      Array.from({ length: 100 }, (_, i) => ({ anonymousId: `a${i}`, attributes: { n: i } })),
    );
    const replies = await Promise.all(requests);
    const bulkReply = await bulk;
    expect(replies.every((r) => r.status === 200)).to.equal(true);
    const trackIds = [
      ...replies.map((r) => r.body.response.trackID as string),
      ...bulkReply.body.response.map((r) => r.trackID as string),
    ];
    expect(new Set(trackIds).size).to.equal(340);
    const events = await app.events();
    expect(events.map((e) => e.event_id).sort()).to.deep.equal([...trackIds].sort());
    // Per stream, positions are 0..n-1.
    const byStream = new Map<string, number[]>();
    for (const e of events) byStream.set(e.stream_name, [...(byStream.get(e.stream_name) ?? []), e.stream_position]);
    for (const positions of byStream.values()) expect(positions).to.deep.equal([...positions.keys()]);
  });

  it('an Idempotency-Key older than 24 hours starts a new window: the repeat is a new request', async () => {
    const headers = { 'idempotency-key': 'order-1' };
    const first = await app.ingest<SingleReply>(account, 'events', { userId: 'u1', eventName: 'paid' }, { headers });
    const retry = await app.ingest<SingleReply>(account, 'events', { userId: 'u1', eventName: 'paid' }, { headers });
    expect(retry.body.response.trackID).to.equal(first.body.response.trackID);
    expect(await app.events()).to.have.length(1);

    await app.pool.query("UPDATE idempotency_keys SET window_start = window_start - interval '25 hours'");
    const later = await app.ingest<SingleReply>(account, 'events', { userId: 'u1', eventName: 'paid' }, { headers });
    expect(later.status).to.equal(200);
    expect(later.body.response.trackID).not.to.equal(first.body.response.trackID);
    expect(await app.events()).to.have.length(2);
  });

  it('a retried merge whose first append was lost is completed by the retry', async () => {
    // The identity map claimed the merge but its events never reached the store (say, the store
    // failed after the claim): the repeat must append the merge, with the id of the first claim.
    const refs = await accountRefs(app, account);
    await app.pool.query(
      `INSERT INTO identity_merges (account_id, anonymous_ref, user_ref, anonymous_id, user_id, merge_event_id)
       VALUES ($1, $2, $3, 'anon-9', 'user-9', 'c0ffee00-0000-5000-8000-000000000009')`,
      [refs.accountId, refs.anonymous('anon-9'), refs.user('user-9')],
    );
    const reply = await app.ingest<SingleReply>(account, 'users', { userId: 'user-9', anonymousId: 'anon-9', attributes: {} });
    expect(reply.status).to.equal(200);
    const merges = (await app.events()).filter((e) => e.event_type === 'ProfilesMerged');
    expect(merges.map((e) => e.event_id)).to.deep.equal(['c0ffee00-0000-5000-8000-000000000009']);
    expect(merges[0]?.metadata.trackId).to.equal(reply.body.response.trackID);
  });
});
