import { expect } from 'chai';
import { streams } from '../src/eventstore/events.js';
import type { CommandDeps } from '../src/ingest/decisions.js';
import { ingestSingle } from '../src/ingest/single-items.js';
import { Validator } from '../src/ingest/validation.js';
import { MemoryAppends, requestContext, testPseudonyms, testRefs } from './support/ingest-doubles.js';

/** The ingest decisions of events, products and productsevents, on an in-memory store. */
describe('single-event commands (unit)', () => {
  let store: MemoryAppends;
  let deps: CommandDeps;
  beforeEach(() => {
    store = new MemoryAppends();
    deps = { store, validator: new Validator(), pseudonyms: testPseudonyms };
  });

  it('stores an event of an anonymous user on the anonymous stream (named by the pseudonym of the id), with eventTimeUtc from receipt when no eventTime is sent', async () => {
    const ctx = requestContext('acc-1', 'events');
    expect(await ingestSingle('events', deps, ctx, { anonymousId: 'a-1', eventName: 'Viewed' })).to.deep.equal({ status: 'queued', trackID: ctx.trackIds(0) });
    expect(store.events).to.deep.equal([
      {
        id: ctx.trackIds(0),
        stream: `anonymous-acc-1-${testRefs('acc-1').anonymous('a-1')}`,
        type: 'EventTracked',
        data: { anonymousId: 'a-1', eventName: 'Viewed', eventTime: null, eventTimeUtc: ctx.receivedAt, eventData: {} },
        metadata: { trackId: ctx.trackIds(0), accountId: 'acc-1', receivedAt: ctx.receivedAt, schemaVersion: 1 },
      },
    ]);
  });

  it('stores a product and a product event on the product stream; a product event without userId has userId null', async () => {
    await ingestSingle('products', deps, requestContext('acc-1', 'products'), { productId: 'p-1', properties: { colour: 'red' } });
    await ingestSingle('productsevents', deps, requestContext('acc-1', 'productsevents'), { productId: 'p-1', eventName: 'Viewed', eventTime: '2024-01-01T12:00:00+0100' });
    expect(store.events.map((e) => [e.stream, e.type, e.data])).to.deep.equal([
      ['product-acc-1-p-1', 'ProductSubmitted', { productId: 'p-1', properties: { colour: 'red' } }],
      [
        'product-acc-1-p-1',
        'ProductEventTracked',
        { productId: 'p-1', userId: null, eventName: 'Viewed', eventTime: '2024-01-01T12:00:00+0100', eventTimeUtc: '2024-01-01T11:00:00.000Z', eventData: {} },
      ],
    ]);
  });

  const emptyProductId = { status: 'error', reason: 'schema', field: 'productId', message: 'productId cannot be empty' };

  it("answers a product event with a missing, null or blank productId 'productId cannot be empty', ahead of its other faults", async () => {
    for (const productId of [undefined, null, '', '  ']) {
      // eventName is missing too: the productId rule comes first.
      expect(await ingestSingle('productsevents', deps, requestContext(), { productId }), String(productId)).to.deep.equal(emptyProductId);
    }
    expect(store.events).to.deep.equal([]);
  });

  it("answers a product with a blank productId 'productId cannot be empty', once its schema holds", async () => {
    expect(await ingestSingle('products', deps, requestContext(), { productId: '  ' })).to.deep.equal(emptyProductId);
    const missing = await ingestSingle('products', deps, requestContext(), {});
    expect(missing).to.include({ status: 'error', reason: 'schema' });
    expect(missing).to.not.deep.equal(emptyProductId);
    expect(store.events).to.deep.equal([]);
  });

  it('rejects a placeholder userId as an identity fault, storing nothing', async () => {
    expect(await ingestSingle('events', deps, requestContext(), { userId: 'undefined', eventName: 'Viewed' })).to.deep.equal({
      status: 'error',
      reason: 'identity',
      field: 'userId',
      message: "userId 'undefined' is a placeholder, not an identity",
    });
    expect(store.events).to.deep.equal([]);
  });

  it('keeps the userId of an event and of a product, and refuses a placeholder userId on products and product events too', async () => {
    await ingestSingle('events', deps, requestContext('acc-1', 'events'), { userId: 'u-1', eventName: 'Viewed' });
    await ingestSingle('products', deps, requestContext('acc-1', 'products'), { productId: 'p-1', userId: 'u-1' });
    expect(store.events.map((e) => e.data)).to.deep.include.members([
      { productId: 'p-1', userId: 'u-1', properties: {} },
    ]);
    expect(store.events[0]?.data).to.include({ userId: 'u-1', eventName: 'Viewed' });
    // The user's stream is named by the pseudonym of the userId, never the id.
    expect(store.events[0]?.stream).to.equal(streams.user('acc-1', testRefs('acc-1').user('u-1')));
    expect(store.events[0]?.stream).not.to.contain('u-1');
    for (const [endpoint, item] of [
      ['products', { productId: 'p-2', userId: 'anonymous' }],
      ['productsevents', { productId: 'p-2', userId: 'anonymous', eventName: 'Viewed' }],
    ] as const) {
      expect(await ingestSingle(endpoint, deps, requestContext(), item), endpoint).to.deep.equal({
        status: 'error',
        reason: 'identity',
        field: 'userId',
        message: "userId 'anonymous' is a placeholder, not an identity",
      });
    }
    expect(store.events).to.have.length(2);
  });

  it("answers a product event that is null or no object 'productId cannot be empty'", async () => {
    for (const item of [null, 'x', 5]) expect(await ingestSingle('productsevents', deps, requestContext(), item), String(item)).to.deep.equal(emptyProductId);
  });
});
