import { expect } from 'chai';
import { servedApp, TestApp, type Credentials } from '../support/app.js';
import { placeholderIds } from '../support/documented-limits.js';
import { accountRefs } from '../support/id-refs.js';
import { accountIdOf, expectMetadata, itemError, queued, storesNothing } from '../support/replies.js';

const badEventTimes = ['2024-01-01T10:00:00+05', '2024-13-01T00:00:00', '2024-01-01 10:00:00', '2024-02-30T00:00:00'];
// Every placeholder of docs/decisions.md, a few in other case and with blanks around, and a blank id.
const refusedIds = [...placeholderIds, 'NaN', ' None ', 'GUEST', '  '];

/** A valid body of `endpoint` with `extra` fields added or overridden. */
function validBody(endpoint: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  if (endpoint === 'events') return { userId: 'u-1', eventName: 'Viewed', ...extra };
  if (endpoint === 'products') return { productId: 'p-1', userId: 'u-1', ...extra };
  return { productId: 'p-1', userId: 'u-1', eventName: 'Viewed', ...extra };
}

const keys = (count: number): Record<string, number> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

describe('ingest endpoints: accepted items are stored as events (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  it('stores an event as EventTracked on the user stream (named by the pseudonym of the userId), keeping eventTime as sent', async () => {
    const trackID = queued(
      await app.ingest(account, 'events', {
        userId: 'u-1',
        eventName: 'Signed Up',
        eventTime: '2024-01-01T10:00:00',
        eventData: { plan: 'pro', seats: 3 },
      }),
    );
    const events = await app.events();
    expect(events).to.have.length(1);
    const [event] = events;
    expect(event?.event_id).to.equal(trackID);
    expect(event?.event_type).to.equal('EventTracked');
    const refs = await accountRefs(app, accountIdOf(event));
    expect(event?.stream_name).to.equal(`user-${accountIdOf(event)}-${refs.user('u-1')}`);
    expect(event?.stream_name).not.to.contain('u-1');
    expect(event?.data).to.deep.include({
      userId: 'u-1',
      eventName: 'Signed Up',
      eventTime: '2024-01-01T10:00:00',
      eventTimeUtc: '2024-01-01T10:00:00.000Z',
      eventData: { plan: 'pro', seats: 3 },
    });
    expectMetadata(event, trackID);
  });

  it('stores an event of an anonymous user on the anonymous stream (named by the pseudonym of the anonymousId)', async () => {
    queued(await app.ingest(account, 'events', { anonymousId: 'anon-1', eventName: 'Viewed' }));
    const [event] = await app.events();
    expect(event?.event_type).to.equal('EventTracked');
    const refs = await accountRefs(app, accountIdOf(event));
    expect(event?.stream_name).to.equal(`anonymous-${accountIdOf(event)}-${refs.anonymous('anon-1')}`);
    expect(event?.stream_name).not.to.contain('anon-1');
    expect(event?.data).to.deep.include({ anonymousId: 'anon-1', eventName: 'Viewed' });
  });

  it('normalizes eventTime to UTC: no zone is UTC, +hhmm/-hhmm offsets, six-digit fractions', async () => {
    const cases: [string, RegExp][] = [
      ['2024-01-01T10:00:00', /^2024-01-01T10:00:00(\.0+)?Z$/],
      ['2024-01-01T10:00:00+0530', /^2024-01-01T04:30:00(\.0+)?Z$/],
      ['2024-01-01T10:00:00-0200', /^2024-01-01T12:00:00(\.0+)?Z$/],
      ['2024-01-01T10:00:00.123456', /^2024-01-01T10:00:00\.123456Z$/],
      ['2024-01-01T00:30:00.123456+0100', /^2023-12-31T23:30:00\.123456Z$/],
    ];
    for (const [eventTime] of cases) queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'Tick', eventTime }));
    const events = await app.events();
    expect(events.map((e) => e.data.eventTime)).to.deep.equal(cases.map(([sent]) => sent));
    events.forEach((event, i) => expect(event.data.eventTimeUtc, String(event.data.eventTime)).to.match(cases[i]?.[1] as RegExp));
  });

  it('uses the time of receipt as eventTimeUtc when eventTime is missing', async () => {
    queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'Tick' }));
    queued(await app.ingest(account, 'productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'Viewed' }));
    const events = await app.events();
    expect(events).to.have.length(2);
    for (const event of events) {
      expect(event.data.eventTime ?? null).to.equal(null);
      expect(event.data.eventTimeUtc).to.be.a('string').and.equal(event.metadata.receivedAt);
    }
  });

  it('stores a product as ProductSubmitted on the product stream', async () => {
    const trackID = queued(
      await app.ingest(account, 'products', { productId: 'sku-9', userId: 'u-1', properties: { name: 'Lamp', price: 19.9 } }),
    );
    const [event] = await app.events();
    expect(event?.event_id).to.equal(trackID);
    expect(event?.event_type).to.equal('ProductSubmitted');
    expect(event?.stream_name).to.equal(`product-${accountIdOf(event)}-sku-9`);
    expect(event?.data).to.deep.include({ productId: 'sku-9', userId: 'u-1', properties: { name: 'Lamp', price: 19.9 } });
    expectMetadata(event, trackID);
  });

  it('stores a product event as ProductEventTracked on the product stream, eventTime as sent and in UTC', async () => {
    const trackID = queued(
      await app.ingest(account, 'productsevents', {
        productId: 'sku-9',
        userId: 'u-1',
        eventName: 'Added to cart',
        eventTime: '2024-06-01T12:00:00+0200',
        eventData: { quantity: 2 },
      }),
    );
    queued(await app.ingest(account, 'products', { productId: 'sku-9' }));
    const [event, product] = await app.events();
    expect(event?.event_id).to.equal(trackID);
    expect(event?.event_type).to.equal('ProductEventTracked');
    expect(event?.stream_name).to.equal(`product-${accountIdOf(event)}-sku-9`);
    expect(product?.stream_name).to.equal(event?.stream_name);
    expect(event?.data).to.deep.include({
      productId: 'sku-9',
      userId: 'u-1',
      eventName: 'Added to cart',
      eventTime: '2024-06-01T12:00:00+0200',
      eventData: { quantity: 2 },
    });
    expect(event?.data.eventTimeUtc).to.match(/^2024-06-01T10:00:00(\.0+)?Z$/);
    expectMetadata(event, trackID);
  });

  it('accepts a product event with userId null, a 50-character eventName and 25 eventData keys', async () => {
    queued(await app.ingest(account, 'productsevents', { productId: 'p-1', userId: null, eventName: 'n'.repeat(50), eventData: keys(25) }));
    const [event] = await app.events();
    expect(event?.data).to.deep.include({ userId: null, eventName: 'n'.repeat(50), eventData: keys(25) });
  });

  it('accepts product event data values of every listed type, nested objects included', async () => {
    const eventData = {
      label: 'red',
      price: 9.5,
      count: 3,
      gift: false,
      at: '2024-01-01T10:00:00Z',
      tags: ['a', 1, true, null],
      details: { size: { width: 2, unit: 'cm' }, list: [{ x: 1 }] },
    };
    queued(await app.ingest(account, 'productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'Viewed', eventData }));
    const [event] = await app.events();
    expect(event?.data.eventData).to.deep.equal(eventData);
  });
});

describe('ingest endpoints: rejected items store nothing (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { scope: 'suite' });

  const rejected = (endpoint: string, body: unknown): Promise<string> =>
    storesNothing(app, async () => itemError(await app.ingest(account, endpoint, body)));

  const emptyProductId = { response: { status: 'error', message: 'productId cannot be empty' } };
  for (const [label, productId] of [['missing', undefined], ["''", ''], ["'  '", '  ']] as const) {
    it(`answers a product event with productId ${label} exactly with 'productId cannot be empty'`, async () => {
      const reply = await storesNothing(app, () => app.ingest(account, 'productsevents', { productId, userId: 'u-1', eventName: 'Viewed' }));
      expect(reply.status).to.equal(400);
      expect(reply.body).to.deep.equal(emptyProductId);
    });
  }

  it('rejects a product event whose eventName has 51 characters, naming eventName', async () => {
    expect(await rejected('productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'n'.repeat(51) })).to.contain('eventName');
  });

  it('rejects a product event with 26 eventData keys, naming eventData', async () => {
    const message = await rejected('productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'Viewed', eventData: keys(26) });
    expect(message).to.contain('eventData');
  });

  it('rejects a null top-level eventData value, naming its key', async () => {
    const message = await rejected('productsevents', {
      productId: 'p-1',
      userId: 'u-1',
      eventName: 'Viewed',
      eventData: { colour: 'red', coupon: null },
    });
    expect(message).to.contain('coupon');
  });

  it('rejects a product event with a numeric userId, naming userId', async () => {
    expect(await rejected('productsevents', { productId: 'p-1', userId: 42, eventName: 'Viewed' })).to.contain('userId');
  });

  for (const endpoint of ['productsevents', 'events', 'products']) {
    it(`rejects an unknown top-level field on ${endpoint}, naming it`, async () => {
      expect(await rejected(endpoint, validBody(endpoint, { colour: 'red' }))).to.contain('colour');
    });
  }

  it('rejects an event without userId and anonymousId', async () => {
    const message = await rejected('events', { eventName: 'Viewed', eventData: {} });
    expect(message).to.match(/userId|anonymousId/);
  });

  for (const endpoint of ['events', 'productsevents']) {
    for (const eventTime of badEventTimes) {
      it(`rejects eventTime '${eventTime}' on ${endpoint}, naming eventTime`, async () => {
        expect(await rejected(endpoint, validBody(endpoint, { eventTime }))).to.contain('eventTime');
      });
    }
  }

  for (const field of ['userId', 'anonymousId']) {
    for (const id of refusedIds) {
      it(`rejects ${field} '${id}' on users and on events, naming ${field}`, async () => {
        expect(await rejected('users', { [field]: id, attributes: {} })).to.contain(field);
        expect(await rejected('events', { [field]: id, eventName: 'Viewed' })).to.contain(field);
      });
    }
  }
});
