import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, usesBrowser, type WatchedPage } from './support/browser.js';
import { until } from './support/eventually.js';
import { CountingRelay, createBrowserKey, inPage, liveItems, localStorageOf, openTracker, trackerPage, usesSecondOrigin, type SecondOrigin } from './support/second-origin.js';

/**
 * Two tabs of one site (docs/browser.md, Delivery): each sends its own queue, and the tab left
 * takes over the queue of a tab that is gone, so that no item is lost or stored twice.
 */
describe('browser SDK in two tabs of one site (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  let shop: SecondOrigin;
  let watched: WatchedPage;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  usesSecondOrigin((origin) => (shop = origin));
  beforeEach(async () => (watched = await openPage(browser)));
  afterEach(() => watched.close());

  it('two tabs tracking at once, one closed while nothing gets through: every item of both stored once', async function () {
    this.timeout(60_000);
    const relay = await CountingRelay.start(app.baseUrl);
    try {
      const browserKey = await createBrowserKey(app, account, [shop.origin]);
      const url = shop.page(trackerPage({ baseUrl: relay.baseUrl, licenseCode: account.licenseCode, browserKey }, '', `${app.baseUrl}/sdk/tracking.mjs`));
      const { context, page: first } = watched;
      const second = await context.newPage();
      await openTracker(first, url, watched.problems);
      await openTracker(second, url, watched.problems);
      // Half of each tab's items get through, then the network goes: the rest wait in each tab's queue.
      const track = (page: typeof first, tab: string, from: number, to: number): Promise<unknown> =>
        inPage(page, `for (let n = ${from}; n <= ${to}; n++) tracker.track({ eventName: 'Tab ${tab}', eventData: { n } });`);
      await Promise.all([track(first, 'A', 1, 10), track(second, 'B', 1, 10)]);
      await Promise.all([inPage(first, 'await tracker.flush();'), inPage(second, 'await tracker.flush();')]);
      relay.dropping = true;
      // Each item is in its tab's storage once track() returns.
      await Promise.all([track(first, 'A', 11, 20), track(second, 'B', 11, 20)]);

      // The first tab closes: its beacon is lost too. The second takes over its queue.
      await first.close();
      relay.dropping = false;
      await inPage(second, 'await tracker.flush();');
      const stored = async (tab: string): Promise<number[]> =>
        (await liveItems(app, account, `kind=events&name=${encodeURIComponent(`Tab ${tab}`)}`)).map((item) => (JSON.parse(item.preview ?? 'null') as { n: number }).n).sort((a, b) => a - b);
      const all = Array.from({ length: 20 }, (_, i) => i + 1);
      await until(async () => (await stored('A')).length >= 20 && (await stored('B')).length >= 20, 20_000, () => 'the items of both tabs in Live events');
      await app.projected();
      expect(await stored('A'), 'the closed tab').to.deep.equal(all);
      expect(await stored('B'), 'the open tab').to.deep.equal(all);
      await until(async () => !JSON.stringify(await localStorageOf(second)).includes('Tab '), 5_000, () => 'delivered items still in storage');
    } finally {
      await relay.close();
    }
  });
});
