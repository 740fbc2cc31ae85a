import { expect } from 'chai';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';
import { queued } from './support/replies.js';

/** Live events through the read API: what each item shows, and the filters by name and by person. */

interface LiveItem {
  trackID: string;
  name: string | null;
  userId: string | null;
  anonymousId: string | null;
  productId: string | null;
  preview: string | null;
}

describe('live events: names, people, payloads and their filters (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  before(async () => {
    other = await app.account('initech');
  });

  const live = async (who: Credentials, query = ''): Promise<LiveItem[]> => {
    const reply = await app.get<{ items: LiveItem[] }>(`/admin/v1/accounts/${who.licenseCode}/live?limit=200${query}`, `Bearer ${who.accessToken}`);
    expect(reply.status).to.equal(200);
    return reply.body.items;
  };
  const listed = (who: Credentials, trackID: string) =>
    eventually(async () => (await live(who)).find((item) => item.trackID === trackID), 10_000, () => `${trackID} not listed`);

  it('shows each item with its name, person, product and the start of its payload', async () => {
    const event = queued(await app.ingest(account, 'events', { anonymousId: 'anon-7', eventName: 'Viewed', eventData: { page: '/pricing' } }));
    const productEvent = queued(await app.ingest(account, 'productsevents', { productId: 'sku-1', userId: 'u-7', eventName: 'Bought', eventData: {} }));
    const long = queued(await app.ingest(account, 'events', { userId: 'u-7', eventName: 'Long', eventData: { note: 'n'.repeat(1000) } }));
    expect(await listed(account, event)).to.deep.include({ name: 'Viewed', userId: null, anonymousId: 'anon-7', productId: null, preview: '{"page":"/pricing"}' });
    expect(await listed(account, productEvent)).to.deep.include({ name: 'Bought', userId: 'u-7', productId: 'sku-1', preview: '{}' });
    const cut = (await listed(account, long)).preview ?? '';
    expect(cut).to.have.length(120);
    expect(cut.endsWith('…')).to.equal(true);
  });

  it("filters by exact event name and by a person's userId or anonymousId, within the account only", async () => {
    const mine = queued(await app.ingest(account, 'events', { userId: 'shared-id', eventName: 'Signed up', eventData: {} }));
    const mineOther = queued(await app.ingest(account, 'events', { userId: 'someone-else', eventName: 'Signed up', eventData: {} }));
    const anonymous = queued(await app.ingest(account, 'events', { anonymousId: 'shared-anon', eventName: 'Opened', eventData: {} }));
    const theirs = queued(await app.ingest(other, 'events', { userId: 'shared-id', eventName: 'Signed up', eventData: {} }));
    await listed(account, anonymous);
    await listed(other, theirs);

    const byName = (await live(account, `&name=${encodeURIComponent('Signed up')}`)).map((item) => item.trackID);
    expect(byName).to.have.members([mine, mineOther]);
    expect(await live(account, '&name=signed%20up'), 'exact, not case-blind').to.deep.equal([]);

    expect((await live(account, '&user=shared-id')).map((item) => item.trackID)).to.deep.equal([mine]);
    expect((await live(account, '&user=shared-anon')).map((item) => item.trackID)).to.deep.equal([anonymous]);
    expect((await live(account, '&user=shared-id&name=Opened'))).to.deep.equal([]);
    expect((await live(other, '&user=shared-id')).map((item) => item.trackID)).to.deep.equal([theirs]);
    // An empty filter is no filter.
    expect((await live(account, '&user=&name=')).length).to.be.greaterThan(3);
  });

  it('refuses a filter given twice or holding a NUL character, naming it', async () => {
    const twice = await app.get<{ error: string }>(`/admin/v1/accounts/${account.licenseCode}/live?user=a&user=b`, `Bearer ${account.accessToken}`);
    expect(twice.status).to.equal(400);
    expect(twice.body.error).to.include('user');
    const nul = await app.get<{ error: string }>(`/admin/v1/accounts/${account.licenseCode}/live?name=a%00b`, `Bearer ${account.accessToken}`);
    expect(nul.status).to.equal(400);
    expect(nul.body.error).to.include('name');
  });
});
