import { expect } from 'chai';
import type { LivePage } from '../../projections/track-index/live.js';
import { adminToken, servedApp, type Credentials, type Reply, type TestApp } from '../support/app.js';
import { bulkResults, queued, requestError } from '../support/replies.js';

/** Live events: an account's latest stored events from the track index, and polling for newer ones. */

const admin = `Bearer ${adminToken}`;
const bearer = (account: Credentials): string => `Bearer ${account.accessToken}`;
const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

describe('read API: live events (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  beforeEach(async () => {
    other = await app.account('other');
  });

  const live = async (on: Credentials, query = '', token = bearer(on)): Promise<LivePage> => {
    await app.projected();
    const reply = await app.get<LivePage>(`/admin/v1/accounts/${on.licenseCode}/live${query}`, token);
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body).to.have.all.keys('items', 'cursor', 'olderCursor');
    return reply.body;
  };

  /** One item of each kind (a bulk of two users among them), in the order posted; their trackIDs. */
  const postOneOfEach = async (on: Credentials): Promise<string[]> => [
    queued(await app.ingest(on, 'users', { userId: 'u-1', attributes: {} })),
    ...bulkResults(await app.ingest(on, 'users/bulk', [{ userId: 'u-2', attributes: {} }, { anonymousId: 'a-3', attributes: {} }])).map((r) => r.trackID as string),
    queued(await app.ingest(on, 'events', { userId: 'u-1', eventName: 'signup' })),
    queued(await app.ingest(on, 'products', { productId: 'p-1', properties: { name: 'Shoe' } })),
    queued(await app.ingest(on, 'productsevents', { productId: 'p-1', eventName: 'view' })),
  ];

  it("lists the account's stored events newest first, each with its kind, and no other account's", async () => {
    const posted = await postOneOfEach(account);
    await postOneOfEach(other);
    const page = await live(account);
    expect(page.items.map((i) => i.trackID)).to.deep.equal([...posted].reverse());
    expect(page.items.map((i) => `${i.kind} ${i.eventType}`)).to.deep.equal([
      'productsevents ProductEventTracked',
      'products ProductSubmitted',
      'events EventTracked',
      'users UserUpserted',
      'users UserUpserted',
      'users UserUpserted',
    ]);
    const positions = page.items.map((i) => i.globalPosition);
    expect(positions).to.deep.equal([...positions].sort((a, b) => b - a));
    const stored = await app.events();
    for (const item of page.items) {
      const event = stored.find((e) => e.metadata.trackId === item.trackID);
      expect(item.stream).to.equal(event?.stream_name);
      expect(item.globalPosition).to.equal(Number(event?.global_position));
      expect(Date.parse(item.receivedAt)).to.be.closeTo(Date.parse(event?.metadata.receivedAt as string), 5_000);
    }
    // The admin token reads it too; the other account sees only its own.
    expect((await live(account, '', admin)).items).to.deep.equal(page.items);
    const theirs = await live(other);
    expect(theirs.items).to.have.length(6);
    expect(theirs.items.some((i) => posted.includes(i.trackID))).to.equal(false);
  });

  it('filters by kind (bulk users and merges are users) and keeps to limit', async () => {
    const posted = await postOneOfEach(account);
    const merge = queued(await app.ingest(account, 'users', { userId: 'u-1', anonymousId: 'a-3', attributes: {} }));
    const users = await live(account, '?kind=users');
    expect(users.items.map((i) => i.eventType)).to.deep.equal(['ProfilesMerged', 'UserUpserted', 'UserUpserted', 'UserUpserted', 'UserUpserted']);
    expect(users.items.map((i) => i.trackID)).to.deep.equal([merge, merge, posted[2], posted[1], posted[0]]);
    expect((await live(account, '?kind=events')).items.map((i) => i.trackID)).to.deep.equal([posted[3]]);
    expect((await live(account, '?kind=products')).items.map((i) => i.trackID)).to.deep.equal([posted[4]]);
    expect((await live(account, '?kind=productsevents')).items.map((i) => i.trackID)).to.deep.equal([posted[5]]);
    const newest = await live(account, '?kind=users&limit=2');
    expect(newest.items.map((i) => i.eventType)).to.deep.equal(['ProfilesMerged', 'UserUpserted']);
    // "More": the older items, a page at a time, from the page's olderCursor.
    const older = await live(account, `?kind=users&limit=2&before=${newest.olderCursor}`);
    expect(older.items.map((i) => i.trackID)).to.deep.equal([posted[2], posted[1]]);
    const oldest = await live(account, `?kind=users&limit=2&before=${older.olderCursor}`);
    expect([oldest.items.map((i) => i.trackID), oldest.olderCursor]).to.deep.equal([[posted[0]], null]);
    expect((await live(account, '?limit=1')).items.map((i) => i.trackID)).to.deep.equal([merge]);
  });

  it('returns after a cursor only the newer items, and the same cursor while there are none', async () => {
    await postOneOfEach(account);
    const first = await live(account);
    const empty = await live(account, `?after=${first.cursor}`);
    expect(empty).to.deep.equal({ items: [], cursor: first.cursor, olderCursor: null });

    const newer = [
      queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'later' })),
      queued(await app.ingest(other, 'events', { userId: 'u-1', eventName: 'theirs' })),
      queued(await app.ingest(account, 'users', { userId: 'u-9', attributes: {} })),
    ];
    const polled = await live(account, `?after=${first.cursor}`);
    expect(polled.items.map((i) => i.trackID)).to.deep.equal([newer[2], newer[0]]);
    expect(polled.cursor).to.not.equal(first.cursor);
    expect((await live(account, `?after=${polled.cursor}`)).items).to.deep.equal([]);
    expect((await live(account, `?kind=events&after=${first.cursor}`)).items.map((i) => i.trackID)).to.deep.equal([newer[0]]);
    // A cursor given out before anything was stored: everything is newer.
    const before = await live(await app.account('fresh'));
    expect(before.items).to.deep.equal([]);
    expect((await live(account, `?after=${before.cursor}&limit=200`)).items).to.have.length(8);
  });

  it('answers 400 naming the parameter for a bad kind, limit or after', async () => {
    const path = `/admin/v1/accounts/${account.licenseCode}/live`;
    const bad: [string, string][] = [
      ['?kind=user', 'kind'],
      ['?kind=users&kind=events', 'kind'],
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=2.5', 'limit'],
      ['?limit=ten', 'limit'],
      ['?after=not-a-cursor', 'after'],
      [`?after=${Buffer.from('live:-1').toString('base64url')}`, 'after'],
      [`?after=${Buffer.from('live:99999999999999999999').toString('base64url')}`, 'after'],
    ];
    for (const [query, parameter] of bad) {
      expect(requestError(await app.get(path + query, bearer(account)), 400), query).to.match(new RegExp(`^${parameter} `));
    }
    expect((await live(account, '?limit=200&kind=')).items).to.deep.equal([]);
  });

  it("answers 401 to another account's token and without one", async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    await app.projected();
    const path = `/admin/v1/accounts/${account.licenseCode}/live`;
    requestError(await app.get(path, bearer(other)), 401);
    requestError(await app.get(path), 401);
  });
});
