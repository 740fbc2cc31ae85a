import { expect } from 'chai';
import { gzipSync } from 'node:zlib';
import { servedApp, TestApp, type Credentials, type Reply, type StoredEvent } from './support/app.js';
import { until } from './support/eventually.js';
import { bulkResults, itemError, queued, requestError } from './support/replies.js';

/**
 * Segment's messages as the spec's items, one test per row of docs/segment.md's tables: what is
 * stored for each call, what the profile holds, and what is refused.
 */
describe("Segment's messages as the spec's items (e2e)", () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  const basic = (): string => `Basic ${Buffer.from(`${account.accessToken}:`).toString('base64')}`;
  const send = (type: string, message: Record<string, unknown>): Promise<Reply> => app.request('POST', `/v1/${type}`, message, { authorization: basic() });
  const batch = (messages: Record<string, unknown>[], extra: Record<string, unknown> = {}): Promise<Reply> => app.request('POST', '/v1/batch', { batch: messages, ...extra }, { authorization: basic() });
  /** The stored events of a message, by their metadata's trackId. */
  const eventsOf = async (trackId: string): Promise<StoredEvent[]> => (await app.events()).filter((e) => (e.metadata as { trackId?: string }).trackId === trackId);
  const lead = async (id: string): Promise<Record<string, unknown>> => {
    await app.projected();
    const reply = await app.get<Record<string, unknown>>(`/admin/v1/accounts/${account.licenseCode}/leads/${encodeURIComponent(id)}`, `Bearer ${account.accessToken}`);
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return reply.body;
  };

  it('identify: a user whose traits with a spec meaning are system attributes, the others custom attributes under snake_case keys', async () => {
    const trackId = queued(
      await send('identify', {
        userId: 'u-traits',
        messageId: 'identify-1',
        traits: {
          email: 'ann@example.com',
          firstName: 'Ann',
          last_name: 'Lee',
          phone: 5551234,
          birthday: '1990-05-01',
          gender: 'f',
          title: 'CTO',
          address: { street: '1 Main St', city: 'Oslo', state: 'Oslo', postalCode: '0150', country: 'NO', unit: '4B' },
          company: { name: 'Acme', employee_count: 12, industry: 'Retail' },
          job_position: 'lead',
          planName: 'pro',
          'Favorite Color': 'blue',
          preferences: { newsletter: true, channel: { primary: 'email' } },
          tags: ['a', 'b'],
          nothing: null,
          id: 'u-traits',
        },
      }),
    );
    const [event] = await eventsOf(trackId);
    expect(event?.event_type).to.equal('UserUpserted');
    expect((event?.metadata as { source?: unknown }).source).to.deep.equal({ api: 'segment', messageId: 'identify-1' });
    const profile = await lead('u-traits');
    expect(profile).to.include({
      email: 'ann@example.com',
      firstName: 'Ann',
      lastName: 'Lee',
      phone: '5551234',
      gender: 'f',
      title: 'CTO',
      address: '1 Main St',
      city: 'Oslo',
      state: 'Oslo',
      zipcode: '0150',
      country: 'NO',
      company: 'Acme',
      number_of_employees: 12,
      job_position: 'lead',
    });
    expect(profile.birth_date).to.match(/^1990-05-01T00:00:00/);
    expect(profile.attributes).to.deep.equal({
      address_unit: '4B',
      company_industry: 'Retail',
      plan_name: 'pro',
      favorite_color: 'blue',
      preferences_newsletter: true,
      preferences_channel_primary: 'email',
      tags: '["a","b"]',
    });
  });

  it('identify with userId and anonymousId, and alias (previousId), merge the anonymous profile into the known user', async () => {
    queued(await send('page', { anonymousId: 'visitor-1', messageId: 'page-1' }));
    queued(await send('identify', { userId: 'u-merge', anonymousId: 'visitor-1', traits: { email: 'm@example.com' } }));
    queued(await send('track', { anonymousId: 'visitor-2', event: 'Viewed Pricing' }));
    queued(await send('alias', { userId: 'u-merge', previousId: 'visitor-2' }));
    const profile = await lead('u-merge');
    expect(profile.anonymousIds).to.have.members(['visitor-1', 'visitor-2']);
    expect((await lead('visitor-2')).userId).to.equal('u-merge');
    const again = await send('alias', { userId: 'u-other', previousId: 'visitor-2' });
    expect(itemError(again)).to.match(/already merged into userId 'u-merge'/);
  });

  it('track: an event of the person, eventName from event and eventData from properties', async () => {
    const trackId = queued(await send('track', { userId: 'u-track', event: 'Signed Up', properties: { plan: 'pro', seats: 3, extras: { a: [1, 2] } } }));
    const [event] = await eventsOf(trackId);
    expect(event?.event_type).to.equal('EventTracked');
    expect(event?.data).to.deep.include({ userId: 'u-track', eventName: 'Signed Up', eventData: { plan: 'pro', seats: 3, extras: { a: [1, 2] } } });
  });

  it('track with a product_id: a product event of that product; past the spec limits the message is refused whole', async () => {
    const trackId = queued(await send('track', { anonymousId: 'visitor-p', event: 'Product Viewed', properties: { product_id: 'sku-1', price: 9.5, brand: null } }));
    const [event] = await eventsOf(trackId);
    expect(event?.event_type).to.equal('ProductEventTracked');
    expect(event?.data).to.deep.include({ productId: 'sku-1', userId: null, eventName: 'Product Viewed', eventData: { product_id: 'sku-1', price: 9.5 } });
    expect(itemError(await send('track', { userId: 'u', event: 'P'.repeat(51), properties: { product_id: 'sku-1' } }))).to.equal('eventName must be at most 50 characters');
    const many = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`k${i}`, i]));
    expect(itemError(await send('track', { userId: 'u', event: 'Product Added', properties: { product_id: 'sku-1', ...many } }))).to.match(/at most 25 properties/);
  });

  it('track with a products list: the event of the person and a product event per listed product', async () => {
    const trackId = queued(
      await send('track', {
        userId: 'u-order',
        event: 'Order Completed',
        properties: { order_id: 'o-1', currency: 'EUR', total: 30, products: [{ product_id: 'sku-1', quantity: 2 }, { product_id: 7, price: 10 }, { name: 'no id' }] },
      }),
    );
    const events = await eventsOf(trackId);
    expect(events.map((e) => e.event_type)).to.deep.equal(['EventTracked', 'ProductEventTracked', 'ProductEventTracked']);
    expect(events[0]?.data).to.deep.include({ userId: 'u-order', eventName: 'Order Completed' });
    expect(events.slice(1).map((e) => e.data)).to.deep.equal([
      { ...events[1]?.data, productId: 'sku-1', eventData: { order_id: 'o-1', currency: 'EUR', product_id: 'sku-1', quantity: 2 } },
      { ...events[2]?.data, productId: '7', eventData: { order_id: 'o-1', currency: 'EUR', product_id: 7, price: 10 } },
    ]);
  });

  it('page and screen: Page Viewed and Screen Viewed events with name, category, properties and the page context', async () => {
    const page = queued(
      await send('page', {
        anonymousId: 'visitor-page',
        name: 'Pricing',
        category: 'Docs',
        properties: { title: 'Pricing – Acme' },
        context: { page: { path: '/pricing', url: 'https://acme.example/pricing', title: 'ignored: properties win', referrer: '' } },
      }),
    );
    expect((await eventsOf(page))[0]?.data).to.deep.include({
      anonymousId: 'visitor-page',
      eventName: 'Page Viewed',
      eventData: { name: 'Pricing', category: 'Docs', title: 'Pricing – Acme', path: '/pricing', url: 'https://acme.example/pricing', referrer: '' },
    });
    const screen = queued(await send('screen', { userId: 'u-app', name: 'Home', properties: { tab: 2 } }));
    expect((await eventsOf(screen))[0]?.data).to.deep.include({ userId: 'u-app', eventName: 'Screen Viewed', eventData: { name: 'Home', tab: 2 } });
  });

  it("group: the person's company from the group's traits, and the group id", async () => {
    queued(await send('group', { userId: 'u-group', groupId: 'g-42', traits: { name: 'Acme Inc', employees: 250, industry: 'Retail', plan: 'enterprise' } }));
    const profile = await lead('u-group');
    expect(profile).to.include({ company: 'Acme Inc', number_of_employees: 250 });
    expect(profile.attributes).to.deep.equal({ company_industry: 'Retail', company_plan: 'enterprise', group_id: 'g-42' });
  });

  it('context: campaign as utm_source and utm_* attributes, user agent as device_type; a page view with a campaign updates the profile', async () => {
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
    const trackId = queued(
      await send('page', { anonymousId: 'visitor-utm', context: { userAgent: iphone, campaign: { source: 'newsletter', medium: 'email', name: 'spring', term: 'shoes', content: 'top' } } }),
    );
    expect((await eventsOf(trackId)).map((e) => e.event_type)).to.deep.equal(['EventTracked', 'UserUpserted']);
    const profile = await lead('visitor-utm');
    expect(profile).to.include({ utm_source: 'newsletter', device_type: 'mobile' });
    expect(profile.attributes).to.deep.equal({ utm_medium: 'email', utm_campaign: 'spring', utm_term: 'shoes', utm_content: 'top' });
    // Without a campaign a page view is an event only; traits win over the context.
    const plain = queued(await send('page', { anonymousId: 'visitor-utm', context: { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36' } }));
    expect((await eventsOf(plain)).map((e) => e.event_type)).to.deep.equal(['EventTracked']);
    queued(await send('identify', { anonymousId: 'visitor-desk', traits: { utm_source: 'trait' }, context: { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36', campaign: { source: 'context' } } }));
    expect(await lead('visitor-desk')).to.include({ utm_source: 'trait', device_type: 'desktop' });
  });

  it("time: the device's clock corrected by sentAt; a timestamp without sentAt as sent; future and malformed times refused", async () => {
    const received = Date.now();
    const skew = 3 * 60 * 60 * 1000;
    const deviceNow = new Date(received + skew).toISOString();
    const happened = new Date(received + skew - 60_000).toISOString();
    const [corrected] = bulkResults(await batch([{ type: 'track', userId: 'u-time', event: 'Skewed', timestamp: happened }], { sentAt: deviceNow }));
    const [event] = await eventsOf(corrected?.trackID as string);
    const at = Date.parse((event?.data as { eventTimeUtc: string }).eventTimeUtc);
    // A minute before receipt, within the time the request took.
    expect(at).to.be.within(received - 60_000 - 5_000, Date.now() - 60_000 + 5);
    const imported = queued(await send('track', { userId: 'u-time', event: 'Imported', timestamp: '2020-02-03T04:05:06.789+0100' }));
    expect((await eventsOf(imported))[0]?.data).to.deep.include({ eventTime: '2020-02-03T04:05:06.789+0100', eventTimeUtc: '2020-02-03T03:05:06.789Z' });
    expect(itemError(await send('track', { userId: 'u-time', event: 'Future', timestamp: new Date(received + 2 * 86_400_000).toISOString() }))).to.match(/^timestamp .* more than 24 hours ahead/);
    expect(itemError(await send('track', { userId: 'u-time', event: 'Epoch', timestamp: 1700000000 }))).to.match(/^timestamp must be an ISO 8601 date-time/);
    expect(itemError(await send('track', { userId: 'u-time', event: 'Bad sentAt', timestamp: deviceNow, sentAt: 'yesterday' }))).to.match(/^sentAt must be/);
  });

  it("refuses what the spec's rules refuse, naming the field: ids, the type lock, keys the naming rule cannot take, two traits for one field", async () => {
    expect(itemError(await send('track', { event: 'No one' }))).to.equal('userId or anonymousId is required');
    expect(itemError(await send('identify', { userId: true }))).to.equal('userId must be a string');
    expect(itemError(await send('identify', { userId: 'undefined' }))).to.match(/placeholder/);
    expect(itemError(await send('track', { userId: 'u-r' }))).to.equal('event is required');
    expect(itemError(await send('alias', { userId: 'u-r' }))).to.equal('previousId is required');
    expect(itemError(await send('identify', { userId: 'u-r', traits: 'not an object' }))).to.equal('traits must be an object');
    expect(itemError(await send('identify', { userId: 'u-r', traits: { '9lives': 1 } }))).to.match(/^traits\.9lives: trait key '9lives' cannot be written as an attribute key/);
    expect(itemError(await send('identify', { userId: 'u-r', traits: { firstName: 'A', first_name: 'B' } }))).to.equal('traits.first_name and traits.firstName both set firstName: send one');
    expect(itemError(await send('identify', { userId: 'u-r', traits: { children: 'two' } }))).to.match(/^children must be an integer/);
    queued(await send('identify', { userId: 'u-lock', traits: { seats: 3 } }));
    expect(itemError(await send('identify', { userId: 'u-lock', traits: { seats: 'three' } }))).to.match(/seats/).and.match(/number/).and.match(/string/);
    expect((await lead('u-lock')).attributes).to.deep.equal({ seats: 3 });
    const wrongType = await app.request('POST', '/v1/batch', { batch: [{ type: 'jump', userId: 'u' }] }, { authorization: basic() });
    expect(bulkResults(wrongType)[0]?.message).to.equal('type must be one of identify, track, page, screen, group, alias');
  });

  it('takes numbers as ids, and a blank userId beside an anonymousId as none (what RudderStack sends for a visitor)', async () => {
    const numeric = queued(await send('group', { userId: 42, groupId: 7, traits: { name: 'Acme' } }));
    expect((await eventsOf(numeric))[0]?.data).to.deep.include({ userId: '42' });
    const visitor = queued(await send('track', { userId: '', anonymousId: 'rudder-visitor', event: 'Viewed' }));
    expect((await eventsOf(visitor))[0]?.data).to.deep.include({ anonymousId: 'rudder-visitor', eventName: 'Viewed' }).and.not.have.property('userId');
    expect(itemError(await send('track', { userId: '', event: 'Nobody' }))).to.equal('userId cannot be empty');
  });

  it('refuses an order of more than 100 products, and a request of more than 5,000 product events', async () => {
    const products = (n: number) => Array.from({ length: n }, (_, i) => ({ product_id: `p-${i}` }));
    expect(itemError(await send('track', { userId: 'u-cap', event: 'Order Completed', properties: { products: products(101) } }))).to.equal('properties.products holds 101 products: at most 100 per message');
    const many = Array.from({ length: 51 }, () => ({ type: 'track', userId: 'u-cap', event: 'Order Completed', properties: { products: products(100) } }));
    expect(requestError(await batch(many), 400)).to.equal('the messages hold 5100 product events: at most 5,000 per request');
  });

  it('keeps a write key sent in the body out of Warnings, and takes such bodies only up to Segment\'s own sizes', async () => {
    const refused = await app.request('POST', '/v1/t', undefined, { raw: JSON.stringify({ userId: 'u-wk', writeKey: account.accessToken }), headers: { 'content-type': 'text/plain' } });
    expect(itemError(refused)).to.equal('event is required');
    const fromPage = await app.request('POST', '/v1/batch', { batch: [{ type: 'track', userId: 'u-wk', event: 'E' }], writeKey: account.accessToken }, { headers: { origin: 'https://shop.example.com' } });
    requestError(fromPage, 403);
    const warnings = async () => (await app.get<{ warnings: { excerpt: string | null; status: number }[] }>(`/admin/v1/accounts/${account.licenseCode}/warnings/recent`, `Bearer ${account.accessToken}`)).body.warnings;
    await until(async () => (await warnings()).some((w) => w.status === 403), 5_000, () => 'the refusals in Warnings');
    await until(async () => (await warnings()).some((w) => w.excerpt?.includes('u-wk') === true), 5_000, () => 'the refused message in Warnings');
    expect(JSON.stringify(await warnings())).to.not.contain(account.accessToken);
    const padding = 'x'.repeat(600 * 1024);
    const big = { batch: [{ type: 'track', userId: 'u-wk', event: 'Big', properties: { padding } }] };
    requestError(await app.request('POST', '/v1/batch', { ...big, writeKey: account.accessToken }), 413);
    expect(bulkResults(await app.request('POST', '/v1/batch', big, { authorization: basic() })).map((r) => r.status)).to.deep.equal(['queued']);
  });

  it('a batch answers each message in order, storing the good ones; the batch context is each message\'s', async () => {
    const results = bulkResults(
      await batch(
        [
          { type: 'identify', userId: 'u-batch', traits: { email: 'b@example.com' } },
          { type: 'track', userId: 'u-batch' },
          { type: 'track', userId: 'u-batch', event: 'Kept', context: { library: { name: 'own' } } },
        ],
        { context: { library: { name: 'analytics-python', version: '2.3.0' } } },
      ),
    );
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'error', 'queued']);
    expect(results[1]?.message).to.equal('event is required');
    const [identified] = await eventsOf(results[0]?.trackID as string);
    expect((identified?.metadata as { source?: { library?: string } }).source?.library).to.equal('analytics-python 2.3.0');
    const [kept] = await eventsOf(results[2]?.trackID as string);
    expect((kept?.metadata as { source?: { library?: string } }).source?.library).to.equal('own');
  });

  it('takes gzip and text/plain bodies, and a batch of 500 KB', async () => {
    const message = { type: 'track', userId: 'u-body', event: 'Compressed' };
    const gz = await app.request('POST', '/v1/batch', undefined, { authorization: basic(), raw: gzipSync(JSON.stringify({ batch: [message] })), headers: { 'content-encoding': 'gzip' } });
    expect(bulkResults(gz).map((r) => r.status)).to.deep.equal(['queued']);
    const text = await app.request('POST', '/v1/t', undefined, { raw: JSON.stringify({ ...message, writeKey: account.accessToken }), headers: { 'content-type': 'text/plain;charset=UTF-8' } });
    queued(text);
    const padding = 'x'.repeat(450);
    const messages = Array.from({ length: 1_000 }, (_, i) => ({ type: 'track', userId: `u-big-${i % 50}`, messageId: `big-${i}`, event: 'Bulk', properties: { padding } }));
    const body = JSON.stringify({ batch: messages });
    expect(body.length).to.be.within(500_000, 600_000);
    const big = await app.request('POST', '/v1/batch', undefined, { authorization: basic(), raw: body });
    expect(bulkResults(big).filter((r) => r.status === 'queued')).to.have.length(1_000);
  });

  it('takes the write key from X-Write-Key too; refuses a request without a usable write key (401), from a page with an access token (403), or of a bad shape (400)', async () => {
    const message = { type: 'track', userId: 'u', event: 'E' };
    // Jitsu's libraries send the key in a header of their own.
    bulkResults(await app.request('POST', '/v1/batch', { batch: [message] }, { headers: { 'x-write-key': account.accessToken } }));
    requestError(await app.request('POST', '/v1/batch', { batch: [message] }), 401);
    requestError(await app.request('POST', '/v1/batch', { batch: [message] }, { authorization: `Basic ${Buffer.from('tok_wrong:').toString('base64')}` }), 401);
    requestError(await app.request('POST', '/v1/batch', { batch: [message], writeKey: 'not a key' }), 401);
    requestError(await app.request('POST', '/v1/batch', { batch: [message] }, { authorization: basic(), headers: { origin: 'https://shop.example.com' } }), 403);
    requestError(await app.request('POST', '/v1/batch', { batch: [message], writeKey: 'tbk_other' }, { authorization: basic() }), 400);
    requestError(await batch([]), 400);
    requestError(await app.request('POST', '/v1/batch', [message], { authorization: basic() }), 400);
  });

  it("answers a page's preflight on Segment's paths with the headers it asks for (RudderStack's own among them)", async () => {
    const preflight = (path: string, headers: string) =>
      fetch(app.baseUrl + path, { method: 'OPTIONS', headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': headers } });
    const segment = await preflight('/v1/batch', 'authorization,content-type,anonymousid');
    expect(segment.status).to.equal(204);
    expect(segment.headers.get('access-control-allow-headers')).to.equal('authorization,content-type,anonymousid');
    expect((await preflight('/v1/t', 'x;y=1')).headers.get('access-control-allow-headers')).to.not.contain('x;y');
    // The spec's own paths keep their fixed list.
    expect((await preflight(`/v1/accounts/${account.licenseCode}/events`, 'anonymousid')).headers.get('access-control-allow-headers')).to.not.contain('anonymousid');
  });
});

describe("Segment's browser settings behind a proxy (e2e)", () => {
  let app: TestApp;
  before(async () => {
    app = await TestApp.start({ trustProxy: 'loopback' });
  });
  after(() => app.stop());

  it('name the host and scheme the page used, as a trusted proxy says', async () => {
    const owner = await app.account('behind a proxy');
    const made = await app.request<{ browserKey: string }>('POST', `/admin/v1/accounts/${owner.licenseCode}/browser-keys`, { label: 'shop', origins: ['https://shop.example.com'] }, { authorization: `Bearer ${owner.accessToken}` });
    const reply = await app.request<{ integrations: Record<string, { apiHost: string; protocol: string }> }>('GET', `/v1/projects/${made.body.browserKey}/settings`, undefined, {
      headers: { 'x-forwarded-host': 'track.example.com', 'x-forwarded-proto': 'https' },
    });
    expect(reply.body.integrations['Segment.io']).to.include({ apiHost: 'track.example.com/v1', protocol: 'https' });
  });
});
