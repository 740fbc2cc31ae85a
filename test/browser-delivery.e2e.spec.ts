import { expect } from 'chai';
import type { Browser, Route } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, usesBrowser, type WatchedPage } from './support/browser.js';
import { until, within } from './support/eventually.js';
import {
  CountingRelay,
  countSendsOfTab,
  createBrowserKey,
  inPage,
  liveItems,
  localStorageOf,
  openTracker,
  recordSends,
  sendsOfTab,
  trackerPage,
  usesSecondOrigin,
  type LiveItem,
  type SecondOrigin,
  type TrackerOptions,
} from './support/second-origin.js';

/**
 * Delivery of the browser SDK (docs/browser.md, Delivery) in a real Chromium, from a page of another
 * origin, against the real service: pages left at once, closed tabs, lost replies, going offline,
 * refusals to come back later. What is stored is read through Live events, as a user sees it.
 */

/** The `n` of each item's eventData (its preview, `{"n":3}`), in the order given. */
const numbers = (items: LiveItem[]): number[] => items.map((item) => (JSON.parse(item.preview ?? 'null') as { n: number }).n);
const oneTo = (count: number): number[] => Array.from({ length: count }, (_, i) => i + 1);

describe('browser SDK delivery (e2e)', () => {
  let app: TestApp;
  let browser: Browser;
  let shop: SecondOrigin;
  servedApp((started) => ({ app } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  usesSecondOrigin((origin) => (shop = origin));

  let account: Credentials;
  let options: TrackerOptions;
  let watched: WatchedPage;
  let accounts = 0;
  beforeEach(async () => {
    accounts += 1;
    account = await app.account(`delivery-${accounts}`);
    options = { baseUrl: app.baseUrl, licenseCode: account.licenseCode, browserKey: await createBrowserKey(app, account, [shop.origin]) };
    watched = await openPage(browser);
  });
  afterEach(async () => {
    await watched.close();
  });

  /** The events named `name` in Live events, oldest first. */
  const stored = async (name: string): Promise<LiveItem[]> => (await liveItems(app, account, `kind=events&name=${encodeURIComponent(name)}`)).reverse();
  /** Waits until `count` events named `name` are listed, then until every projection is done, and gives them, oldest first. */
  const storedAtLeast = async (name: string, count: number, ms = 15_000): Promise<LiveItem[]> => {
    let listed = 0;
    await until(
      async () => (listed = (await stored(name)).length) >= count,
      ms,
      () => `${listed} of ${count} events ${name} in Live events`,
    );
    await app.projected();
    return stored(name);
  };
  const storageHolds = async (text: string): Promise<boolean> => JSON.stringify(await localStorageOf(watched.page)).includes(text);

  it('the page navigates away right after track(), 50 times: 50 items stored, none twice, within the per-address limit', async () => {
    // Through a relay, to see the batches the pages sent again.
    const relay = await CountingRelay.start(app.baseUrl);
    try {
      const url = shop.page(
        trackerPage(
          { ...options, baseUrl: relay.baseUrl },
          `const n = Number(new URLSearchParams(location.search).get('n'));
if (n <= 50) {
  tracker.track({ eventName: 'Hop', eventData: { n } });
  location.assign('?n=' + (n + 1));
} else {
  await tracker.flush();
  window.finished = true;
}`,
          `${app.baseUrl}/sdk/tracking.mjs`,
        ),
      );
      const { context, page } = watched;
      await countSendsOfTab(context);
      await page.goto(`${url}?n=1`, { waitUntil: 'commit' });
      await page.waitForURL(`${url}?n=51`, { timeout: 30_000 });
      await page.waitForFunction('window.finished === true', undefined, { timeout: 15_000 });
      const hops = await storedAtLeast('Hop', 50);
      expect(numbers(hops).sort((a, b) => a - b)).to.deep.equal(oneTo(50));
      expect(await storageHolds('Hop'), 'items left in storage').to.equal(false);
      // Batches a page sent as it went were sent again by the next: what "none twice" is about.
      const keys = relay.ingest().filter((request) => request.url.includes('/events/bulk')).map((request) => new URL(request.url, relay.baseUrl).searchParams.get('idempotencyKey'));
      expect(keys.length - new Set(keys).size, 'batches sent again').to.be.above(0);
      // One visitor's 51 pages stay well under what the service takes from an address (600 requests
      // a minute by default): past it, the rest of the visit gets 429, and Warnings fill with it.
      const sends = await sendsOfTab(page);
      expect(sends, 'fetch and sendBeacon calls of the 51 pages, beacons of pages gone included').to.be.below(600);
      watched.expectNoProblems();
    } finally {
      await relay.close();
    }
  });

  it('a tab closed with a queue (its requests and its beacon lost) is delivered on the next visit, once', async () => {
    const relay = await CountingRelay.start(app.baseUrl);
    try {
      relay.dropping = true;
      const url = shop.page(trackerPage({ ...options, baseUrl: relay.baseUrl }, '', `${app.baseUrl}/sdk/tracking.mjs`));
      const { context, page } = watched;
      await openTracker(page, url, watched.problems);
      await inPage(page, `for (const n of [1, 2, 3]) tracker.track({ eventName: 'Queued', eventData: { n } });`);
      expect(await storageHolds('Queued'), 'the queue in localStorage').to.equal(true);

      // Closed, the tab sends what is queued as it goes (a beacon), which is lost too.
      const closing = Date.now();
      await page.close();
      await until(
        () => relay.seen.some((request) => request.at >= closing && request.url.includes('/events/bulk')),
        5_000,
        () => 'the closing tab sent nothing of its queue',
      );
      relay.dropping = false;
      await app.projected();
      expect(await stored('Queued'), 'stored before the next visit').to.deep.equal([]);
      expect(relay.seen.filter((request) => !request.dropped), 'requests let through').to.deep.equal([]);

      // The next visit, in a new tab of the same browser (its storage kept), tracks nothing itself.
      const next = await context.newPage();
      await openTracker(next, url, watched.problems);
      const queued = await storedAtLeast('Queued', 3);
      expect(numbers(queued)).to.deep.equal([1, 2, 3]);
      await until(
        async () => !JSON.stringify(await localStorageOf(next)).includes('Queued'),
        5_000,
        () => 'the delivered items are still in storage',
      );
    } finally {
      await relay.close();
    }
  });

  it('a reload while a batch’s reply is dropped (the service stored it) stores it once', async () => {
    const { page } = watched;
    const url = shop.page(trackerPage(options));
    await openTracker(page, url, watched.problems);
    await inPage(page, 'await tracker.flush();');

    let drop!: (status: number) => void;
    const dropped = new Promise<number>((resolve) => (drop = resolve));
    let first = true;
    await page.route(`${app.baseUrl}/v1/**`, async (route: Route) => {
      if (!first || !(route.request().postData() ?? '').includes('Dropped')) return route.continue();
      first = false;
      // The request reaches the service, which stores the batch; its reply never reaches the page.
      const reply = await route.fetch();
      await route.abort('connectionreset');
      drop(reply.status());
    });
    await inPage(page, `tracker.track({ eventName: 'Dropped' });`);
    expect(await within(dropped, 10_000, 'the batch with the event Dropped'), 'the status the service gave the batch').to.equal(200);
    await page.reload();
    await page.waitForFunction('window.tracker !== undefined');
    await inPage(page, 'await tracker.flush();');
    await until(async () => !(await storageHolds('Dropped')), 10_000, () => 'the batch is still in storage after the reload');
    expect(await storedAtLeast('Dropped', 1)).to.have.length(1);
  });

  it('offline then online: nothing sent while offline, then everything delivered in order', async () => {
    const { context, page } = watched;
    await recordSends(context);
    await openTracker(page, shop.page(trackerPage(options)), watched.problems);
    await inPage(page, 'await tracker.flush();');

    await context.setOffline(true);
    expect(await inPage(page, 'return navigator.onLine;')).to.equal(false);
    // More than a batch holds (100 items); flush() asks for them to be sent now: nothing goes.
    const calls = await inPage<number>(
      page,
      `const before = window.sends.length;
for (let n = 1; n <= 150; n++) tracker.track({ eventName: 'Offline', eventData: { n } });
window.flushed = tracker.flush();
return window.sends.length - before;`,
    );
    expect(calls, 'fetch and sendBeacon calls while offline').to.equal(0);
    expect(await storageHolds('Offline'), 'queued in localStorage').to.equal(true);

    await context.setOffline(false);
    await inPage(page, 'await window.flushed;');
    const delivered = await storedAtLeast('Offline', 150);
    expect(numbers(delivered)).to.deep.equal(oneTo(150));
    watched.expectNoProblems();
  });

  it('retries a batch answered 503, then 429, then delivers it once, waiting at least each Retry-After', async () => {
    const { page } = watched;
    await openTracker(page, shop.page(trackerPage(options)), watched.problems);
    await inPage(page, 'await tracker.flush();');
    const attempts: number[] = [];
    const refusals = [
      { status: 503, retryAfter: 2, error: 'the event store is unavailable' },
      { status: 429, retryAfter: 3, error: 'rate limit exceeded' },
    ];
    await page.route(`${app.baseUrl}/v1/**`, async (route: Route) => {
      if (!(route.request().postData() ?? '').includes('Retried')) return route.continue();
      attempts.push(Date.now());
      const refusal = refusals[attempts.length - 1];
      if (refusal === undefined) return route.continue();
      // As the service answers: its CORS headers, Retry-After exposed.
      return route.fulfill({
        status: refusal.status,
        headers: {
          'access-control-allow-origin': shop.origin,
          'access-control-expose-headers': 'Retry-After, Idempotent-Replayed, X-Request-Id',
          vary: 'Origin',
          'retry-after': String(refusal.retryAfter),
        },
        contentType: 'application/json',
        body: JSON.stringify({ error: refusal.error, code: refusal.status }),
      });
    });
    await inPage(page, `tracker.track({ eventName: 'Retried' });`);
    expect(await storedAtLeast('Retried', 1, 20_000)).to.have.length(1);
    expect(attempts, 'attempts of the batch').to.have.length(3);
    const [first, second, third] = attempts as [number, number, number];
    // Measured from each refused attempt's arrival here, before the page had its reply.
    expect(second - first, 'wait after the 503').to.be.at.least(2_000);
    expect(third - second, 'wait after the 429').to.be.at.least(3_000);
  });
});
