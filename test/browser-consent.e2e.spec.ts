import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, usesBrowser, type WatchedPage } from './support/browser.js';
import { until } from './support/eventually.js';
import {
  CountingRelay,
  cookie,
  createBrowserKey,
  inPage,
  liveItems,
  openTracker,
  recordSends,
  trackerPage,
  usesSecondOrigin,
  type SecondOrigin,
  type TrackerOptions,
} from './support/second-origin.js';

/**
 * Consent and privacy in the browser SDK (docs/browser.md, Consent and privacy) in a real Chromium,
 * from a page of another origin, against the real service. The page talks to the service through a
 * CountingRelay, which sees every request, beacons too (a page's request events do not show them).
 */

/** What the site holds in the browser: cookies of the context, and the page's storage. */
async function heldBy(context: BrowserContext, page: Page): Promise<{ cookies: string[]; localStorage: number; sessionStorage: number; indexedDB: number }> {
  const storage = await inPage<{ localStorage: number; sessionStorage: number; indexedDB: number }>(
    page,
    'return { localStorage: localStorage.length, sessionStorage: sessionStorage.length, indexedDB: (await indexedDB.databases()).length };',
  );
  return { cookies: (await context.cookies()).map((c) => c.name), ...storage };
}

const nothingHeld = { cookies: [], localStorage: 0, sessionStorage: 0, indexedDB: 0 };

/** Makes `navigator.globalPrivacyControl` true in every page of the context, before its scripts run. */
async function globalPrivacyControl(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: `Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true, configurable: true });` });
}

describe('browser SDK consent and privacy (e2e)', () => {
  let app: TestApp;
  let browser: Browser;
  let shop: SecondOrigin;
  servedApp((started) => ({ app } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  usesSecondOrigin((origin) => (shop = origin));

  let account: Credentials;
  let relay: CountingRelay;
  let options: TrackerOptions;
  let watched: WatchedPage;
  let accounts = 0;
  beforeEach(async () => {
    accounts += 1;
    account = await app.account(`consent-${accounts}`);
    relay = await CountingRelay.start(app.baseUrl);
    options = { baseUrl: relay.baseUrl, licenseCode: account.licenseCode, browserKey: await createBrowserKey(app, account, [shop.origin]) };
    watched = await openPage(browser);
  });
  afterEach(async () => {
    await watched.close();
    await relay.close();
  });

  const sdk = (): string => `${app.baseUrl}/sdk/tracking.mjs`;
  const names = async (): Promise<(string | null)[]> => (await liveItems(app, account, 'kind=events')).map((item) => item.name);
  /** Waits until Live events list an event named `name`, then until every projection is done. */
  const untilListed = async (name: string): Promise<void> => {
    await until(async () => (await names()).includes(name), 10_000, () => `no event ${name} in Live events`);
    await app.projected();
  };

  it('consent pending writes nothing to cookies or storage and sends nothing; granted, it stores and sends what waited', async () => {
    const { page, context } = watched;
    const url = shop.page(
      trackerPage(
        { ...options, consent: 'pending' },
        `tracker.page(); tracker.track({ eventName: 'Before consent' }); tracker.identify({ userId: 'u-pending', email: 'pending@example.com' });`,
        sdk(),
      ),
    );
    await recordSends(context);
    await openTracker(page, url, watched.problems);
    // flush() asks for what is held to be sent now: nothing goes.
    expect(await inPage(page, `tracker.track({ eventName: 'Still pending' }); void tracker.flush(); return window.sends;`), 'fetch and sendBeacon calls').to.deep.equal([]);
    expect(await heldBy(context, page)).to.deep.equal(nothingHeld);

    const granted = Date.now();
    await inPage(page, `tracker.consent('granted'); await tracker.flush();`);
    expect(await cookie(context, 'trk_aid'), 'the trk_aid cookie once granted').to.be.a('string');
    await untilListed('Still pending');
    expect(await names()).to.have.members(['page_view', 'Before consent', 'Still pending']);
    expect(relay.ingest().filter((request) => request.at < granted), 'requests before consent').to.deep.equal([]);
    const lead = await app.get<{ userId: string; email: string }>(`/admin/v1/accounts/${account.licenseCode}/leads/u-pending`, `Bearer ${account.accessToken}`);
    expect(lead.body).to.include({ userId: 'u-pending', email: 'pending@example.com' });
    watched.expectNoProblems();
  });

  it('consent denied drops what waited: granted later, only what came after is sent', async () => {
    const { page, context } = watched;
    await openTracker(page, shop.page(trackerPage({ ...options, consent: 'pending' }, `tracker.track({ eventName: 'Denied' });`, sdk())), watched.problems);
    await inPage(page, `tracker.consent('denied');`);
    expect((await heldBy(context, page)).localStorage, 'localStorage after consent denied').to.equal(0);
    expect(await cookie(context, 'trk_aid')).to.equal(undefined);

    await inPage(page, `tracker.consent('granted'); tracker.track({ eventName: 'After consent' }); await tracker.flush();`);
    await untilListed('After consent');
    expect(await names()).to.not.include('Denied');
    watched.expectNoProblems();
  });

  it('with Global Privacy Control on, sends nothing and stores nothing; told to ignore it, the SDK sends', async () => {
    const { page, context } = watched;
    await globalPrivacyControl(context);
    await recordSends(context);
    const script = `tracker.page(); tracker.track({ eventName: 'Under GPC' }); tracker.identify({ userId: 'u-gpc' });`;
    await openTracker(page, shop.page(trackerPage(options, script, sdk())), watched.problems);
    expect(await inPage(page, 'return navigator.globalPrivacyControl;')).to.equal(true);
    expect(await inPage(page, `tracker.track({ eventName: 'Under GPC too' }); void tracker.flush(); return window.sends;`), 'fetch and sendBeacon calls').to.deep.equal([]);
    const held = await heldBy(context, page);
    // As optOut(), which may leave its trk_optout cookie: no id, nothing queued.
    expect(held.cookies.filter((name) => name !== 'trk_optout'), 'cookies').to.deep.equal([]);
    expect(held).to.include({ localStorage: 0, sessionStorage: 0, indexedDB: 0 });
    // Leaving the page (pagehide) sends nothing either.
    await page.close();

    // A witness: another browser of GPC, whose SDK ignores it; opened once the first page is gone,
    // its events arrive through the same relay.
    const witness = await openPage(browser);
    try {
      await globalPrivacyControl(witness.context);
      const opened = Date.now();
      await openTracker(witness.page, shop.page(trackerPage({ ...options, globalPrivacyControl: 'ignore' }, script, sdk())), witness.problems);
      await inPage(witness.page, 'await tracker.flush();');
      await untilListed('Under GPC');
      expect(await names()).to.have.members(['page_view', 'Under GPC']);
      expect(relay.ingest().filter((request) => request.at < opened), 'requests of the page under GPC').to.deep.equal([]);
      witness.expectNoProblems();
    } finally {
      await witness.close();
    }
    watched.expectNoProblems();
  });
});
