import { expect } from 'chai';
import { decodeProductsCursor, findProducts, type ProductsCursor } from '../projections/products/queries.js';
import { replyBudgetBytes } from '../projections/reply-bytes.js';
import { adminToken, servedApp, type Credentials, type TestApp } from './support/app.js';
import { erasureDone } from './support/erasures.js';
import { bulkResults, queued, requestError, uuidPattern } from './support/replies.js';

/** The products of the read API over real ingest, projections and PostgreSQL (docs/api.md, Products). */

interface Truncated {
  bytes: number;
  excerpt: string;
}
interface ListedProduct {
  productId: string;
  properties: Record<string, unknown> | null;
  sentByUserId: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
  truncated?: Record<string, Truncated>;
}
interface ProductEvent {
  eventId: string;
  userId: string | null;
  eventName: string;
  eventTimeUtc: string;
  eventData: Record<string, unknown> | null;
  trackID: string | null;
  truncated?: Record<string, Truncated>;
}
type Page<K extends string, T> = Record<K, T[]> & { nextCursor: string | null };

const admin = `Bearer ${adminToken}`;
/** A reply's envelope around its page (keys, cursor) besides the items the budget counts. */
const envelope = 4096;
const ids = Array.from({ length: 12 }, (_, i) => `p-${String(i + 1).padStart(2, '0')}`);

describe('products in the read API (e2e)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });

  const pathOf = (rest: string, of = account): string => `/admin/v1/accounts/${of.licenseCode}/${rest}`;
  const bearerOf = (of: Credentials): string => `Bearer ${of.accessToken}`;
  /** A GET that must answer 200, with the body's size in bytes. */
  async function read<T>(path: string, authorization = admin): Promise<{ body: T; bytes: number }> {
    const response = await fetch(app.baseUrl + path, { headers: { authorization } });
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).to.equal(200);
    return { body: JSON.parse(text) as T, bytes: Buffer.byteLength(text) };
  }
  /** Every item of a paged list from `first`, following nextCursor; each page within the byte bound. */
  async function allOf<T>(first: string, field: string, authorization = admin): Promise<{ items: T[]; pages: number }> {
    const items: T[] = [];
    let pages = 0;
    for (let path: string | null = first; path !== null; pages += 1) {
      const { body, bytes } = await read<Record<string, unknown>>(path, authorization);
      expect(bytes).to.be.at.most(replyBudgetBytes + envelope);
      items.push(...(body[field] as T[]));
      const cursor = body.nextCursor as string | null;
      path = cursor === null ? null : `${first}${first.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`;
      expect(pages, 'pages end').to.be.below(500);
    }
    return { items, pages };
  }
  const productIdsOf = async (path: string, of = account) => (await allOf<ListedProduct>(path, 'products', bearerOf(of))).items.map((p) => p.productId);

  before(async () => {
    other = await app.account('Globex');
    const sent = await app.ingest(account, 'products/bulk', ids.map((productId, i) => ({ productId, userId: 'u-1', properties: { n: i + 1, name: `Product ${i + 1}` } })));
    for (const result of bulkResults(sent)) expect(result.status).to.equal('queued');
    for (const productId of ['Shirt_RED', 'shirt-blue', 'percent%off']) queued(await app.ingest(account, 'products', { productId, properties: { colour: '<b>red</b>' } }));
    queued(await app.ingest(account, 'products', { productId: 'p-03', userId: 'u-2', properties: { n: 3, name: 'Renamed' } }));
    for (let i = 1; i <= 5; i += 1) {
      queued(await app.ingest(account, 'productsevents', { productId: 'p-01', userId: i % 2 ? 'u-1' : null, eventName: `view-${i}`, eventTime: `2026-01-0${i}T10:00:00Z`, eventData: { i } }));
    }
    queued(await app.ingest(account, 'productsevents', { productId: 'ghost', userId: null, eventName: 'view' }));
    queued(await app.ingest(other, 'products', { productId: 'p-01', properties: { globex: true } }));
    queued(await app.ingest(other, 'productsevents', { productId: 'p-01', userId: 'g-1', eventName: 'globex-view' }));
    await app.projected();
  });

  const everyId = () => ['percent%off', 'shirt-blue', 'Shirt_RED', ...[...ids].reverse()];

  it('lists the products newest first by their first submission; a later one changes a product in place', async () => {
    const reply = await app.get<Page<'products', ListedProduct>>(pathOf('products'), bearerOf(account));
    expect(reply.status).to.equal(200);
    expect(reply.headers.get('server-timing')).to.match(/^app;dur=/);
    expect(reply.body.products.map((p) => p.productId)).to.deep.equal(everyId());
    expect(reply.body.nextCursor).to.equal(null);
    const renamed = reply.body.products.find((p) => p.productId === 'p-03');
    expect(renamed).to.deep.include({ properties: { n: 3, name: 'Renamed' }, sentByUserId: 'u-2', version: 2 });
    expect(Date.parse(renamed?.updatedAt ?? '')).to.be.above(Date.parse(renamed?.createdAt ?? ''));
    expect(reply.body.products.find((p) => p.productId === 'Shirt_RED')).to.deep.include({ sentByUserId: null, version: 1, properties: { colour: '<b>red</b>' } });
  });

  it('pages the list and a search through their cursors, with no product missed or repeated', async () => {
    for (const limit of [1, 4, 5]) expect(await productIdsOf(`${pathOf('products')}?limit=${limit}`), `limit ${limit}`).to.deep.equal(everyId());
    expect(await productIdsOf(`${pathOf('products')}?limit=2&q=p-1`)).to.deep.equal(['p-12', 'p-11', 'p-10']);
  });

  it('searches productIds whatever the case, with LIKE wildcards taken literally', async () => {
    const search = async (q: string) => (await read<Page<'products', ListedProduct>>(`${pathOf('products')}?q=${encodeURIComponent(q)}`)).body;
    expect((await search('SHIRT')).products.map((p) => p.productId)).to.deep.equal(['shirt-blue', 'Shirt_RED']);
    expect((await search('_')).products.map((p) => p.productId)).to.deep.equal(['Shirt_RED']);
    expect((await search('%')).products.map((p) => p.productId)).to.deep.equal(['percent%off']);
    expect((await search('  p-0  ')).products).to.have.length(9);
    expect(await search('nothing-like-it')).to.deep.equal({ products: [], nextCursor: null });
    expect(requestError(await app.get(`${pathOf('products')}?q=${'x'.repeat(201)}`, admin), 400)).to.equal('q must be at most 200 characters');
  });

  it('walks a bounded number of products per search request, its short pages chained by their cursors', async () => {
    const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
    const accountId = rows[0]?.id as string;
    const found: string[] = [];
    const sizes: number[] = [];
    let cursor: ProductsCursor | undefined;
    do {
      const page = await findProducts(app.pool, accountId, { q: 'shirt', limit: 10, cursor, walkBudget: 3 });
      found.push(...page.products.map((p) => p.productId));
      sizes.push(page.products.length);
      cursor = page.nextCursor === null ? undefined : (decodeProductsCursor(page.nextCursor) ?? undefined);
    } while (cursor);
    expect(found).to.deep.equal(['shirt-blue', 'Shirt_RED']);
    // 15 products walked 3 at a time: a page without a match still carries a cursor, also the one
    // whose walk ended on the list's last product (the next walks nothing and ends the list).
    expect(sizes).to.deep.equal([2, 0, 0, 0, 0, 0]);
  });

  it('gives one product in full, and 404 for a productId never submitted', async () => {
    expect((await read<ListedProduct>(pathOf('products/p-03'))).body).to.deep.include({ productId: 'p-03', properties: { n: 3, name: 'Renamed' }, sentByUserId: 'u-2', version: 2 });
    expect((await read<ListedProduct>(pathOf(`products/${encodeURIComponent('percent%off')}`))).body.productId).to.equal('percent%off');
    for (const id of ['nope', 'ghost', 'P-03']) {
      expect(requestError(await app.get(pathOf(`products/${id}`), admin), 404)).to.equal('no product with this productId (an accepted product is listed here within about a second)');
    }
  });

  it("pages a product's events latest first, also those of a productId never submitted; 404 for one known from neither", async () => {
    const { items, pages } = await allOf<ProductEvent>(`${pathOf('products/p-01/events')}?limit=2`, 'events');
    expect(pages).to.equal(3);
    expect(items.map((e) => e.eventName)).to.deep.equal(['view-5', 'view-4', 'view-3', 'view-2', 'view-1']);
    expect(items.map((e) => e.userId)).to.deep.equal(['u-1', null, 'u-1', null, 'u-1']);
    expect(items[0]).to.deep.include({ eventTimeUtc: '2026-01-05T10:00:00.000000Z', eventData: { i: 5 } });
    for (const event of items) expect(event.trackID).to.match(uuidPattern);
    expect((await read<Page<'events', ProductEvent>>(pathOf('products/ghost/events'))).body.events.map((e) => e.eventName)).to.deep.equal(['view']);
    expect((await read<Page<'events', ProductEvent>>(pathOf('products/p-02/events'))).body).to.deep.equal({ events: [], nextCursor: null });
    expect(requestError(await app.get(pathOf('products/nothing/events'), admin), 404)).to.match(/^no product with this productId/);
  });

  it('refuses a cursor it did not give out, or of another list, and a bad limit, with 400 naming the parameter', async () => {
    const events = (await read<Page<'events', ProductEvent>>(`${pathOf('products/p-01/events')}?limit=1`)).body;
    const list = (await read<Page<'products', ListedProduct>>(`${pathOf('products')}?limit=1`)).body;
    const refusals = [
      [pathOf('products?cursor=garbage'), 'cursor is not one this API gave out'],
      [pathOf(`products?cursor=${events.nextCursor}`), 'cursor is not one this API gave out'],
      [pathOf(`products/p-01/events?cursor=${list.nextCursor}`), 'cursor is not one this API gave out'],
      [pathOf('products?limit=0'), 'limit must be an integer from 1 to 500'],
      [pathOf('products?limit=501'), 'limit must be an integer from 1 to 500'],
      [pathOf('products/p-01/events?limit=ten'), 'limit must be an integer from 1 to 500'],
      [pathOf('products?q=a&q=b'), 'q must be given once, as text'],
    ];
    for (const [path, error] of refusals) expect(requestError(await app.get(path as string, bearerOf(account)), 400), path).to.equal(error);
  });

  it("shows an account its own products only: another account's token gets 401, an ingest token 403", async () => {
    for (const rest of ['products', 'products/p-01', 'products/p-01/events']) {
      expect((await app.get(pathOf(rest), bearerOf(other))).status, rest).to.equal(401);
    }
    const token = await app.request<{ accessToken: string }>('POST', pathOf('tokens'), { label: 'shop', scope: 'ingest' }, { authorization: admin });
    expect((await app.get(pathOf('products'), `Bearer ${token.body.accessToken}`)).status).to.equal(403);
    const own = (await read<Page<'products', ListedProduct>>(pathOf('products', other), bearerOf(other))).body.products;
    expect(own.map((p) => [p.productId, p.properties])).to.deep.equal([['p-01', { globex: true }]]);
    expect((await read<Page<'events', ProductEvent>>(pathOf('products/p-01/events', other), bearerOf(other))).body.events.map((e) => e.eventName)).to.deep.equal(['globex-view']);
    expect((await app.get(pathOf('products/p-03', other), bearerOf(other))).status).to.equal(404);
    expect((await app.get(pathOf('products/ghost/events', other), bearerOf(other))).status).to.equal(404);
  });

  it('bounds the list and the events in bytes: pages under 1 MiB, properties and event data over 4 KiB truncated, whole by their own calls', async () => {
    const big = await app.account('Big');
    const medium = 'm'.repeat(3900);
    const large = 'L'.repeat(200_000);
    for (let round = 0; round < 3; round += 1) {
      const items = Array.from({ length: 100 }, (_, i) => ({ productId: `mid-${round * 100 + i}`, properties: { medium, n: round * 100 + i } }));
      for (const result of bulkResults(await app.ingest(big, 'products/bulk', items))) expect(result.status).to.equal('queued');
      const events = Array.from({ length: 100 }, (_, i) => ({ productId: 'mid-0', userId: null, eventName: 'mid', eventData: { medium, n: round * 100 + i } }));
      for (const result of bulkResults(await app.ingest(big, 'productsevents/bulk', events))) expect(result.status).to.equal('queued');
    }
    queued(await app.ingest(big, 'products', { productId: 'huge', properties: { large } }));
    queued(await app.ingest(big, 'productsevents', { productId: 'mid-0', userId: null, eventName: 'huge', eventData: { large } }));
    await app.projected(60_000);

    const list = await allOf<ListedProduct>(`${pathOf('products', big)}?limit=500`, 'products', bearerOf(big));
    expect(list.pages).to.be.above(1);
    expect(list.items.map((p) => p.productId)).to.deep.equal(['huge', ...Array.from({ length: 300 }, (_, n) => `mid-${299 - n}`)]);
    expect(list.items.filter((p) => p.truncated).map((p) => p.productId)).to.deep.equal(['huge']);
    const huge = list.items[0] as ListedProduct;
    expect(huge.properties).to.equal(null);
    expect(huge.truncated?.properties?.bytes).to.be.within(large.length, large.length + 50);
    expect(huge.truncated?.properties?.excerpt).to.have.length(512);
    expect((await read<ListedProduct>(pathOf('products/huge', big), bearerOf(big))).body.properties).to.deep.equal({ large });

    const events = await allOf<ProductEvent>(`${pathOf('products/mid-0/events', big)}?limit=500`, 'events', bearerOf(big));
    expect(events.pages).to.be.above(1);
    expect(events.items).to.have.length(301);
    expect(new Set(events.items.map((e) => e.eventId)).size).to.equal(301);
    const truncated = events.items.filter((e) => e.truncated);
    expect(truncated.map((e) => e.eventName)).to.deep.equal(['huge']);
    const full = await read<{ data: { eventData: unknown } }>(pathOf(`events/${truncated[0]?.eventId}`, big), bearerOf(big));
    expect(full.body.data.eventData).to.deep.equal({ large });
  });

  it('shows nothing an erased person sent: their product events and submissions are gone once the erasure is done', async () => {
    const shop = await app.account('Erasing');
    queued(await app.ingest(shop, 'products', { productId: 'kept', userId: 'u-keep', properties: { by: 'keep' } }));
    queued(await app.ingest(shop, 'products', { productId: 'kept', userId: 'u-gone', properties: { by: 'gone' } }));
    queued(await app.ingest(shop, 'products', { productId: 'only-gone', userId: 'u-gone', properties: { by: 'gone' } }));
    for (const userId of ['u-keep', 'u-gone', null]) queued(await app.ingest(shop, 'productsevents', { productId: 'kept', userId, eventName: `view by ${userId}` }));
    await app.projected();
    expect((await read<ListedProduct>(pathOf('products/kept', shop), bearerOf(shop))).body).to.deep.include({ sentByUserId: 'u-gone', version: 2 });

    await erasureDone(app, shop, { userId: 'u-gone' });
    await app.projected();
    const products = (await read<Page<'products', ListedProduct>>(pathOf('products', shop), bearerOf(shop))).body.products;
    expect(products.map((p) => [p.productId, p.sentByUserId, p.properties, p.version])).to.deep.equal([['kept', 'u-keep', { by: 'keep' }, 1]]);
    expect((await app.get(pathOf('products/only-gone', shop), bearerOf(shop))).status).to.equal(404);
    const events = (await read<Page<'events', ProductEvent>>(pathOf('products/kept/events', shop), bearerOf(shop))).body.events;
    expect(events.map((e) => [e.userId, e.eventName])).to.have.deep.members([
      ['u-keep', 'view by u-keep'],
      [null, 'view by null'],
    ]);
    expect(JSON.stringify(events)).not.to.contain('u-gone');
  });
});
