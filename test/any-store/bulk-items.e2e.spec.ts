import { expect } from 'chai';
import { adminToken, servedApp, TestApp, type Credentials } from '../support/app.js';
import { bulkResults, eventsOfType, queued, requestError, storesNothing, uuidPattern } from '../support/replies.js';

/** A bulk endpoint of the single-event kinds: valid elements, and invalid ones with the field their message names. */
interface BulkKind {
  endpoint: 'events/bulk' | 'products/bulk' | 'productsevents/bulk';
  eventType: string;
  valid: (i: number) => Record<string, unknown>;
  invalid: { item: unknown; field: RegExp }[];
}

const kinds: BulkKind[] = [
  {
    endpoint: 'events/bulk',
    eventType: 'EventTracked',
    valid: (i) => ({ userId: `u-${i}`, eventName: 'Viewed', eventData: { rank: i } }),
    invalid: [
      { item: { eventName: 'no id' }, field: /userId|anonymousId/ },
      { item: { userId: 'u-9', eventName: 'Viewed', eventTime: 'yesterday' }, field: /eventTime/ },
    ],
  },
  {
    endpoint: 'products/bulk',
    eventType: 'ProductSubmitted',
    valid: (i) => ({ productId: `p-${i}`, properties: { rank: i } }),
    invalid: [
      { item: { productId: '' }, field: /productId/ },
      { item: { productId: 'p-9', properties: 'red' }, field: /properties/ },
    ],
  },
  {
    endpoint: 'productsevents/bulk',
    eventType: 'ProductEventTracked',
    valid: (i) => ({ productId: `p-${i}`, userId: `u-${i}`, eventName: 'Viewed' }),
    invalid: [
      { item: { userId: 'u-9', eventName: 'Viewed' }, field: /productId/ },
      { item: { productId: 'p-9', userId: 'u-9', eventName: 'x'.repeat(51) }, field: /eventName/ },
    ],
  },
];

const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });

for (const kind of kinds) {
  describe(`${kind.endpoint} (e2e)`, () => {
    let app: TestApp;
    let account: Credentials;

    servedApp((started) => ({ app, account } = started));

    const items = (count: number): Record<string, unknown>[] => Array.from({ length: count }, (_, i) => kind.valid(i));

    it('answers 200 with one result per element in input order and stores exactly the valid ones', async () => {
      const [first, second] = kind.invalid as [BulkKind['invalid'][0], BulkKind['invalid'][0]];
      const body = [kind.valid(1), first.item, kind.valid(2), second.item, kind.valid(3)];
      const results = bulkResults(await app.ingest(account, kind.endpoint, body));
      expect(results.map((r) => r.status)).to.deep.equal(['queued', 'error', 'queued', 'error', 'queued']);
      for (const result of results) {
        if (result.status === 'queued') {
          expect(result).to.have.all.keys('status', 'trackID');
          expect(result.trackID).to.match(uuidPattern);
        } else expect(result).to.have.all.keys('status', 'message');
      }
      expect(results[1]?.message).to.match(first.field);
      expect(results[3]?.message).to.match(second.field);

      const queuedIds = results.filter((r) => r.status === 'queued').map((r) => r.trackID);
      expect(new Set(queuedIds).size).to.equal(3);
      const stored = await app.events();
      expect(stored.map((e) => e.event_id)).to.deep.equal(queuedIds);
      expect(stored.map((e) => e.metadata.trackId)).to.deep.equal(queuedIds);
      expect(stored.every((e) => e.event_type === kind.eventType)).to.equal(true);
    });

    it('accepts 100 elements', async () => {
      const results = bulkResults(await app.ingest(account, kind.endpoint, items(100)));
      expect(results.map((r) => r.status)).to.deep.equal(Array.from({ length: 100 }, () => 'queued'));
      expect(await eventsOfType(app, kind.eventType)).to.have.length(100);
    });

    for (const [label, body] of [
      ['an empty array', []],
      ['101 elements', Array.from({ length: 101 }, (_, i) => kind.valid(i))],
      ['an object', kind.valid(1)],
      ['null', null],
    ] as const) {
      it(`rejects a body that is ${label} with 400 form A, storing nothing`, async () => {
        await storesNothing(app, async () => requestError(await app.ingest(account, kind.endpoint, body), 400));
      });
    }

    it('names the limit of 100 when refusing 101 elements', async () => {
      expect(requestError(await app.ingest(account, kind.endpoint, items(101)), 400)).to.contain('100');
    });

    it('answers a repeat with the same Idempotency-Key with the same reply and stores nothing new', async () => {
      const body = [kind.valid(1), kind.invalid[0]?.item, kind.valid(2)];
      const first = await app.ingest(account, kind.endpoint, body, withKey('bulk-1'));
      const results = bulkResults(first);
      expect(results.map((r) => r.status)).to.deep.equal(['queued', 'error', 'queued']);
      const stored = (await app.events()).map((e) => e.event_id);
      expect(stored).to.deep.equal([results[0]?.trackID, results[2]?.trackID]);

      const repeat = await app.ingest(account, kind.endpoint, body, withKey('bulk-1'));
      expect(bulkResults(repeat)).to.deep.equal(results);
      expect(repeat.headers.get('idempotent-replayed')).to.equal('true');
      expect((await app.events()).map((e) => e.event_id)).to.deep.equal(stored);
    });
  });
}

describe('bulk items reach the read models (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { projections: true });

  it('projects bulk events, products and product events like single ones', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    const events = bulkResults(
      await app.ingest(account, 'events/bulk', [
        { userId: 'u-1', eventName: 'Signed up' },
        { anonymousId: 'anon-2', eventName: 'Viewed' },
      ]),
    );
    const products = bulkResults(await app.ingest(account, 'products/bulk', [{ productId: 'p-1', properties: { color: 'red' } }, { productId: 'p-2' }]));
    const productEvents = bulkResults(
      await app.ingest(account, 'productsevents/bulk', [
        { productId: 'p-1', userId: 'u-1', eventName: 'Viewed' },
        { productId: 'p-2', userId: null, eventName: 'Bought' },
      ]),
    );
    await app.projected();

    const userEvents = await app.pool.query<{ event_id: string; user_id: string | null; anonymous_id: string | null; event_name: string }>(
      'SELECT event_id, user_id, anonymous_id, event_name FROM user_events ORDER BY global_position',
    );
    expect(userEvents.rows).to.deep.equal([
      { event_id: events[0]?.trackID, user_id: 'u-1', anonymous_id: null, event_name: 'Signed up' },
      { event_id: events[1]?.trackID, user_id: null, anonymous_id: 'anon-2', event_name: 'Viewed' },
    ]);
    const productRows = await app.pool.query<{ product_id: string; properties: unknown }>('SELECT product_id, properties FROM products ORDER BY product_id');
    expect(productRows.rows).to.deep.equal([
      { product_id: 'p-1', properties: { color: 'red' } },
      { product_id: 'p-2', properties: {} },
    ]);
    expect(products.every((r) => r.status === 'queued')).to.equal(true);
    const productEventRows = await app.pool.query<{ event_id: string; product_id: string; user_id: string | null; event_name: string }>(
      'SELECT event_id, product_id, user_id, event_name FROM product_events ORDER BY global_position',
    );
    expect(productEventRows.rows).to.deep.equal([
      { event_id: productEvents[0]?.trackID, product_id: 'p-1', user_id: 'u-1', event_name: 'Viewed' },
      { event_id: productEvents[1]?.trackID, product_id: 'p-2', user_id: null, event_name: 'Bought' },
    ]);
    const lead = await app.get<{ events: { trackID: string | null }[] }>(`/admin/v1/accounts/${account.licenseCode}/leads/u-1/events`, `Bearer ${adminToken}`);
    expect(lead.status).to.equal(200);
    expect(lead.body.events.map((e) => e.trackID)).to.include(events[0]?.trackID);
  });
});

describe('productsevents/bulk counts items against the product-event limit (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { config: { productEventsPerMinute: 5 } });

  const productEvents = (count: number): Record<string, unknown>[] =>
    Array.from({ length: count }, (_, i) => ({ productId: `p-${i}`, userId: 'u-1', eventName: 'Viewed' }));

  it('counts each element, so a single request after a bulk that used the allowance up is refused', async () => {
    const reply = await app.ingest(account, 'productsevents/bulk', productEvents(5));
    expect(bulkResults(reply).map((r) => r.status)).to.deep.equal(['queued', 'queued', 'queued', 'queued', 'queued']);
    expect(reply.headers.get('ratelimit-limit')).to.equal('5');
    expect(reply.headers.get('ratelimit-remaining')).to.equal('0');
    requestError(await app.ingest(account, 'productsevents', productEvents(1)[0]), 429);
    expect(await eventsOfType(app, 'ProductEventTracked')).to.have.length(5);
  });

  it('refuses a bulk over the remaining allowance whole with 429, storing nothing and using none of the allowance', async () => {
    queued(await app.ingest(account, 'productsevents', productEvents(1)[0]));
    bulkResults(await app.ingest(account, 'productsevents/bulk', productEvents(2)));
    const refused = await storesNothing(app, () => app.ingest(account, 'productsevents/bulk', productEvents(3)));
    expect(requestError(refused, 429)).to.contain('5');
    const seconds = (name: string): number => Number(refused.headers.get(name));
    expect(seconds('retry-after')).to.be.within(1, 60);
    expect(refused.headers.get('ratelimit-limit')).to.equal('5');
    expect(refused.headers.get('ratelimit-remaining')).to.equal('2');
    expect(seconds('ratelimit-reset')).to.be.within(1, 60);

    // The refused request took nothing: the two left are still there, and then no more.
    const fits = await app.ingest(account, 'productsevents/bulk', productEvents(2));
    expect(bulkResults(fits).map((r) => r.status)).to.deep.equal(['queued', 'queued']);
    expect(fits.headers.get('ratelimit-remaining')).to.equal('0');
    requestError(await app.ingest(account, 'productsevents/bulk', productEvents(1)), 429);
    expect(await eventsOfType(app, 'ProductEventTracked')).to.have.length(5);
  });

  it('refuses a bulk larger than the whole limit in a fresh window, and still accepts the limit after it', async () => {
    requestError(await storesNothing(app, () => app.ingest(account, 'productsevents/bulk', productEvents(6))), 429);
    const reply = await app.ingest(account, 'productsevents/bulk', productEvents(5));
    expect(bulkResults(reply)).to.have.length(5);
  });

  it('does not limit events/bulk or products/bulk by the product-event count', async () => {
    bulkResults(await app.ingest(account, 'productsevents/bulk', productEvents(5)));
    const events = Array.from({ length: 10 }, (_, i) => ({ userId: `u-${i}`, eventName: 'Viewed' }));
    expect(bulkResults(await app.ingest(account, 'events/bulk', events))).to.have.length(10);
    expect(bulkResults(await app.ingest(account, 'products/bulk', [{ productId: 'p-1' }]))).to.have.length(1);
  });
});
