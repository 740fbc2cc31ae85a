import { expect } from 'chai';
import type { ItemResult } from '@tracking-ingestion/sdk';
import { servedApp, type Credentials, type TestApp } from '../support/app.js';
import { expectEachStoredOnce, queuedTrackId, sdkClient, timesStoredByTrackId } from '../support/sdk.js';

const items = 100_000;
/**
 * Items the producer lets the client hold: under the default maxQueueSize (10,000), and a multiple of
 * the three kinds sent in turn, so that item i - window is of item i's kind. A kind's items settle
 * in order: once that one has its result, at most `window` items are held.
 */
const window = 9_999;

/** One client, many items, straight to the real service (in this process, on Postgres). */
describe('SDK volume (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started));

  it(`delivers ${items.toLocaleString('en-US')} items through one client, closed at the end, each stored exactly once`, async function () {
    // Tens of seconds on two cores; no timing is asserted.
    this.timeout(600_000);
    const client = sdkClient(app.baseUrl, account, { flushAt: 100 });
    // Three kinds, so that three batches are in flight at a time (one per kind); productsevents are
    // left out, as their rate limit (10,000 a minute) would make the test wait.
    const send = (i: number): Promise<ItemResult> => {
      if (i % 3 === 0) return client.track({ userId: `u-${i % 1_000}`, eventName: 'volume', eventData: { i } });
      if (i % 3 === 1) return client.product({ productId: `p-${i % 1_000}`, properties: { i } });
      return client.identify({ userId: `u-${i % 1_000}`, attributes: { i } });
    };
    const results: Promise<ItemResult>[] = [];
    for (let i = 0; i < items; i += 1) {
      // Waits rather than overfill the queue: no call is refused with QueueFullError.
      if (i >= window) await results[i - window];
      results.push(send(i));
    }
    await client.close();
    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    expect(client.stats()).to.deep.equal({ queued: 0, inFlight: 0, sent: items, failed: 0, retried: 0 });
    expectEachStoredOnce(await timesStoredByTrackId(app.database.url), trackIds);
  });
});
