import { expect } from 'chai';
import { servedApp, TestApp, type Credentials, type Reply } from '../support/app.js';
import { bulkResults, eventsOfType, queued, requestError } from '../support/replies.js';

const user = { userId: 'u-1', attributes: { plan: 'gold' } };
const productEvent = { productId: 'p-1', userId: 'u-1', eventName: 'Viewed' };
const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

describe('Idempotency-Key (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  it('gives a repeated users request the same trackID and stores one event', async () => {
    const first = queued(await app.ingest(account, 'users', user, withKey('key-1')));
    const second = queued(await app.ingest(account, 'users', user, withKey('key-1')));
    expect(second).to.equal(first);
    const events = await app.events();
    expect(events.map((e) => e.event_id)).to.deep.equal([first]);
  });

  it('replays a merge with one UserUpserted and one ProfilesMerged', async () => {
    const merge = { userId: 'u-1', anonymousId: 'anon-1', attributes: {} };
    const first = queued(await app.ingest(account, 'users', merge, withKey('merge-1')));
    expect(queued(await app.ingest(account, 'users', merge, withKey('merge-1')))).to.equal(first);
    expect(await eventsOfType(app, 'UserUpserted')).to.have.length(1);
    expect(await eventsOfType(app, 'ProfilesMerged')).to.have.length(1);
  });

  it('gives a repeated bulk the same trackID per element and stores nothing new', async () => {
    const bulk = [user, { userId: 'u-2', attributes: 'bad' }, { anonymousId: 'anon-3', attributes: {} }];
    const first = bulkResults(await app.ingest(account, 'users/bulk', bulk, withKey('bulk-1')));
    const stored = (await app.events()).length;
    expect(stored).to.equal(2);
    const second = bulkResults(await app.ingest(account, 'users/bulk', bulk, withKey('bulk-1')));
    expect(second).to.deep.equal(first);
    expect(second.map((r) => r.status)).to.deep.equal(['queued', 'error', 'queued']);
    expect(second[0]?.trackID).not.to.equal(second[2]?.trackID);
    expect(await app.events()).to.have.length(stored);
  });

  it('gives the same key on a different endpoint a different trackID', async () => {
    const fromUsers = queued(await app.ingest(account, 'users', user, withKey('shared')));
    const fromEvents = queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'Viewed' }, withKey('shared')));
    expect(fromEvents).not.to.equal(fromUsers);
    expect(await app.events()).to.have.length(2);
  });

  it('gives the same key of two accounts different trackIDs', async () => {
    const other = await app.account('other');
    const mine = queued(await app.ingest(account, 'users', user, withKey('same')));
    const theirs = queued(await app.ingest(other, 'users', user, withKey('same')));
    expect(theirs).not.to.equal(mine);
    expect(await app.events()).to.have.length(2);
  });

  it('without the header, stores two identical requests twice with different trackIDs', async () => {
    const first = queued(await app.ingest(account, 'users', user));
    const second = queued(await app.ingest(account, 'users', user));
    expect(second).not.to.equal(first);
    expect((await app.events()).map((e) => e.event_id)).to.deep.equal([first, second]);
  });
});

describe('productsevents rate limit across processes (e2e)', () => {
  let first: TestApp;
  let second: TestApp;
  let account: Credentials;

  beforeEach(async () => {
    first = await TestApp.start({ productEventsPerMinute: 5 });
    second = await TestApp.start({ productEventsPerMinute: 5 }, { database: first.database });
    account = await first.account();
  });
  afterEach(async () => {
    await second.stop();
    await first.stop();
  });

  const send = (app: TestApp, to = account): Promise<Reply> => app.ingest(to, 'productsevents', productEvent);

  /** Five accepted requests, spread over both processes. */
  async function exhaust(): Promise<void> {
    for (const app of [first, first, first, second, second]) queued(await send(app));
  }

  it('answers the sixth request of a minute, counted over two processes, 429 form A with rate-limit headers', async () => {
    await exhaust();
    const reply = await send(second);
    requestError(reply, 429);
    const seconds = (name: string): number => Number(reply.headers.get(name));
    expect(seconds('retry-after')).to.be.within(1, 60);
    expect(reply.headers.get('ratelimit-limit')).to.equal('5');
    expect(reply.headers.get('ratelimit-remaining')).to.equal('0');
    expect(seconds('ratelimit-reset')).to.be.within(1, 60);
    requestError(await send(first), 429);
    expect(await eventsOfType(first, 'ProductEventTracked')).to.have.length(5);
  });

  it('does not limit another account', async () => {
    await exhaust();
    const other = await first.account('other');
    queued(await send(first, other));
    queued(await send(second, other));
  });

  it('does not limit the other endpoints of the limited account', async () => {
    await exhaust();
    requestError(await send(first), 429);
    queued(await first.ingest(account, 'events', { userId: 'u-1', eventName: 'Viewed' }));
    queued(await second.ingest(account, 'products', { productId: 'p-1' }));
    queued(await first.ingest(account, 'users', user));
    bulkResults(await second.ingest(account, 'users/bulk', [user]));
  });
});
