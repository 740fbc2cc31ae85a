import { expect } from 'chai';
import type { ItemResult, TrackingClient } from '@tracking-ingestion/sdk';
import { servedApp, type Credentials, type TestApp } from '../support/app.js';
import { expectEachStoredOnce, queuedTrackId, sdkClient, timesStoredByTrackId } from '../support/sdk.js';
import { TestProxy } from '../support/sdk-proxy.js';

const perKind = 4_000;
const kinds = 4;

/** The SDK's batches and the service's body budget (docs/decisions.md, Limits), both as they come by default. */
describe('SDK batches and the body budget (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let proxy: TestProxy;
  servedApp((started) => ({ app, account } = started));
  beforeEach(async () => {
    proxy = await TestProxy.start(app.baseUrl);
  });
  afterEach(() => proxy.stop());

  it(`two default clients sending ${(2 * perKind * kinds).toLocaleString('en-US')} items of all four kinds at once never meet a 503 of the budget`, async function () {
    this.timeout(300_000);
    const clients = [sdkClient(proxy.baseUrl, account), sdkClient(proxy.baseUrl, account)];
    const send = (client: TrackingClient, c: number, i: number): Promise<ItemResult>[] => [
      client.identify({ userId: `u-${c}-${i}`, firstName: 'Ann', attributes: { plan: 'gold', visits: i } }),
      client.track({ userId: `u-${c}-${i}`, eventName: 'signup', eventData: { source: 'ads', i } }),
      client.product({ productId: `p-${c}-${i}`, properties: { price: i, colour: 'red' } }),
      client.productEvent({ productId: `p-${c}-${i}`, userId: null, eventName: 'view', eventData: { page: i } }),
    ];
    const results: Promise<ItemResult>[] = [];
    const perRound = clients.length * kinds;
    for (let i = 0; i < perKind; i += 1) {
      // Each client holds at most 2,000 rounds of items, well under its queue's 10,000.
      if (i >= 2_000) await Promise.all(results.slice((i - 2_000) * perRound, (i - 1_999) * perRound));
      clients.forEach((client, c) => results.push(...send(client, c, i)));
    }
    await Promise.all(clients.map((client) => client.close()));

    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    for (const client of clients) expect(client.stats()).to.deep.include({ failed: 0, retried: 0 });
    const budgetRefusals = (await app.get<string>('/metrics')).body.split('\n').filter((line) => line.startsWith('tracking_http_requests_total') && line.includes('status="503"'));
    expect(budgetRefusals).to.deep.equal([]);
    // Compressed or not, each batch says its length, which the service checks before reading it.
    expect(proxy.seen.filter((request) => request.headers['content-length'] === undefined)).to.deep.equal([]);
    expect(proxy.seen.some((request) => request.headers['content-encoding'] === 'gzip')).to.equal(true);
    expectEachStoredOnce(await timesStoredByTrackId(app.database.url), trackIds);
  });
});
