import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, usesBrowser, type WatchedPage } from './support/browser.js';
import { until } from './support/eventually.js';
import {
  cookie,
  createBrowserKey,
  inPage,
  liveItems,
  literal,
  localStorageOf,
  openTracker,
  plainPage,
  readApi,
  trackerPage,
  usesSecondOrigin,
  type SecondOrigin,
  type TrackerOptions,
} from './support/second-origin.js';

/**
 * Identity in the browser SDK (docs/browser.md, Identity) in a real Chromium, from a page of another
 * origin, against the real service: the anonymous visitor, the sign-up that merges it, sign-outs,
 * and the anonymousId kept in a cookie and in storage. What the service made of it is read through
 * the leads API, as a user sees it.
 */

interface Lead {
  userId: string | null;
  anonymousId: string | null;
  anonymousIds: string[] | null;
  email: string | null;
  device_type: string | null;
  utm_source: string | null;
  attributes: Record<string, unknown> | null;
}

interface LeadsPage {
  leads: Lead[];
  total: { count: number; exact: boolean };
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('browser SDK identity (e2e)', () => {
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
    account = await app.account(`identity-${accounts}`);
    options = { baseUrl: app.baseUrl, licenseCode: account.licenseCode, browserKey: await createBrowserKey(app, account, [shop.origin]) };
    watched = await openPage(browser);
  });
  afterEach(async () => {
    await watched.close();
  });

  const leads = (query = ''): Promise<LeadsPage> => readApi<LeadsPage>(app, account, `/leads?limit=500${query ? `&${query}` : ''}`);
  const lead = (id: string): Promise<Lead> => readApi<Lead>(app, account, `/leads/${encodeURIComponent(id)}`);
  const eventNames = async (id: string): Promise<string[]> =>
    (await readApi<{ events: { eventName: string }[] }>(app, account, `/leads/${encodeURIComponent(id)}/events?limit=500`)).events.map((e) => e.eventName);
  const anonymousId = async (): Promise<string> => {
    const id = await cookie(watched.context, 'trk_aid');
    expect(id, 'the trk_aid cookie').to.match(uuid);
    return id as string;
  };
  /** Waits until the known leads are `userIds` (in any order), then until every projection is done. */
  const untilKnown = async (userIds: string[]): Promise<void> => {
    let seen: string[] = [];
    await until(
      async () => {
        seen = (await leads('kind=known')).leads.map((l) => l.userId ?? '');
        return seen.length === userIds.length;
      },
      10_000,
      () => `known leads ${literal(seen)}, not ${literal(userIds)}`,
    );
    await app.projected();
  };

  it('an anonymous visitor who lands with ?utm_source=news, then signs up: one lead, the anonymous profile merged into it, utm_source and device_type set', async () => {
    const { page, context } = watched;
    const url = shop.page(trackerPage(options, 'tracker.page();'));
    await openTracker(page, `${url}?utm_source=news&utm_medium=email&utm_campaign=spring`, watched.problems);
    await inPage(page, `tracker.track({ eventName: 'Viewed pricing' }); await tracker.flush();`);
    const visitor = await anonymousId();

    await inPage(page, `tracker.identify({ userId: 'u-signup', email: 'new@example.com' }); tracker.track({ eventName: 'Subscribed' }); await tracker.flush();`);
    await untilKnown(['u-signup']);

    const everyone = await leads();
    expect(everyone.leads.map((l) => l.userId ?? l.anonymousId), 'every lead').to.deep.equal(['u-signup']);
    expect(everyone.total).to.deep.equal({ count: 1, exact: true });
    const known = await lead('u-signup');
    expect(known.anonymousIds).to.deep.equal([visitor]);
    expect(known).to.include({ utm_source: 'news', device_type: 'desktop', email: 'new@example.com' });
    expect(known.attributes).to.include({ utm_medium: 'email', utm_campaign: 'spring' });
    // The anonymous id leads to the known user; its events are the user's.
    expect((await lead(visitor)).userId).to.equal('u-signup');
    expect(await eventNames('u-signup')).to.have.members(['page_view', 'Viewed pricing', 'Subscribed']);
    expect(await cookie(context, 'trk_uid')).to.equal('u-signup');
    expect(await anonymousId(), 'the anonymousId after the sign-up').to.equal(visitor);
    watched.expectNoProblems();
  });

  it('reset() then another sign-in, or a sign-in as another user: no merge of two people', async () => {
    const { page, context } = watched;
    await openTracker(page, shop.page(trackerPage(options, 'tracker.page();')), watched.problems);
    await inPage(page, `tracker.identify({ userId: 'u-alice' }); tracker.track({ eventName: 'Alice bought' }); await tracker.flush();`);
    const alice = await anonymousId();

    // Sign-out, and another person signs in on the same browser.
    await inPage(page, 'tracker.reset();');
    const bob = await anonymousId();
    expect(bob, 'the anonymousId after reset()').to.not.equal(alice);
    expect(await cookie(context, 'trk_uid'), 'trk_uid after reset()').to.equal(undefined);
    await inPage(page, `tracker.page(); tracker.identify({ userId: 'u-bob' }); tracker.track({ eventName: 'Bob bought' }); await tracker.flush();`);
    expect(await anonymousId()).to.equal(bob);

    // Another one signs in without a sign-out: the SDK resets first.
    await inPage(page, `tracker.identify({ userId: 'u-carol' }); tracker.track({ eventName: 'Carol bought' }); await tracker.flush();`);
    const carol = await anonymousId();
    expect(carol, 'the anonymousId after a sign-in as another user').to.not.be.oneOf([alice, bob]);
    expect(await cookie(context, 'trk_uid')).to.equal('u-carol');

    await untilKnown(['u-alice', 'u-bob', 'u-carol']);
    expect((await leads('kind=anonymous')).leads, 'anonymous leads left unmerged').to.deep.equal([]);
    expect((await lead('u-alice')).anonymousIds).to.deep.equal([alice]);
    expect((await lead('u-bob')).anonymousIds).to.deep.equal([bob]);
    expect((await lead('u-carol')).anonymousIds ?? []).to.not.include.oneOf([alice, bob]);
    expect(await eventNames('u-alice')).to.have.members(['page_view', 'Alice bought']);
    expect(await eventNames('u-bob')).to.have.members(['page_view', 'Bob bought']);
    expect(await eventNames('u-carol')).to.have.members(['Carol bought']);
    watched.expectNoProblems();
  });

  it('cookie cleared but storage kept, and the reverse, and the two disagreeing: one anonymousId', async () => {
    const { context } = watched;
    const url = shop.page(trackerPage(options, 'tracker.page();'));
    const plain = shop.serve('/plain', plainPage);
    let visits = 0;
    /** A visit in a new tab of the same browser: one page view, delivered, then the tab closed. */
    const visit = async (): Promise<{ cookie: string | undefined; storage: string }> => {
      visits += 1;
      const page = await context.newPage();
      try {
        await openTracker(page, url, watched.problems);
        await inPage(page, 'await tracker.flush();');
        return { cookie: await cookie(context, 'trk_aid'), storage: JSON.stringify(await localStorageOf(page)) };
      } finally {
        await page.close();
      }
    };
    /** Runs `code` on a page of the site without the SDK, no tracker running meanwhile. */
    const onPlainPage = async (code: string): Promise<void> => {
      const page = await context.newPage();
      await page.goto(plain);
      await inPage(page, code);
      await page.close();
    };
    await watched.page.close();

    const first = await visit();
    expect(first.cookie).to.match(uuid);
    const id = first.cookie as string;
    expect(first.storage, 'the id mirrored in storage').to.include(id);

    await context.clearCookies({ name: 'trk_aid' });
    expect(await cookie(context, 'trk_aid')).to.equal(undefined);
    const afterCookieCleared = await visit();
    expect(afterCookieCleared.cookie, 'the cookie written again from storage').to.equal(id);

    await onPlainPage('localStorage.clear();');
    const afterStorageCleared = await visit();
    expect(afterStorageCleared.cookie).to.equal(id);
    expect(afterStorageCleared.storage, 'storage written again from the cookie').to.include(id);

    // Storage names another id than the cookie: the cookie wins, and storage is rewritten from it.
    const other = '00000000-0000-4000-8000-000000000000';
    await onPlainPage(`for (const key of Object.keys(localStorage)) localStorage.setItem(key, localStorage.getItem(key).split(${literal(id)}).join(${literal(other)}));`);
    const afterDisagreeing = await visit();
    expect(afterDisagreeing.cookie).to.equal(id);
    expect(afterDisagreeing.storage).to.include(id).and.not.include(other);

    let views = 0;
    await until(
      async () => (views = (await liveItems(app, account, 'kind=events&name=page_view')).length) >= visits,
      10_000,
      () => `${views} of ${visits} page views in Live events`,
    );
    await app.projected();
    const items = await liveItems(app, account);
    expect([...new Set(items.map((item) => item.anonymousId))], 'the anonymousIds the service got').to.deep.equal([id]);
    const anonymous = await leads();
    expect(anonymous.leads.map((l) => l.anonymousId)).to.deep.equal([id]);
    expect((await lead(id)).device_type).to.equal('desktop');
  });
});
