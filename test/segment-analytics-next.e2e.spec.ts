import { expect } from 'chai';
import type { Browser, BrowserContext } from 'playwright-core';
import type { Lead, LeadEventPage } from '../projections/leads/queries.js';
import type { TimelinePage } from '../projections/leads/timeline.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { analyticsNextBundle, analyticsNextVersion } from './support/analytics-next-bundle.js';
import { openPage, usesBrowser, type WatchedPage } from './support/browser.js';
import { eventually } from './support/eventually.js';
import { createBrowserKey, inPage, literal, readApi, usesSecondOrigin, type SecondOrigin } from './support/second-origin.js';

/**
 * Segment's own browser library, the real @segment/analytics-next, in a real Chromium with its web
 * security on, on a page of another origin than the service's, loaded as a website that moves off
 * Segment loads it: `cdnURL` and the Segment.io integration's apiHost point at the service, the write
 * key is a browser key of the page's origin. What the service made of the visit is read through
 * the read API, as a user sees it; every request the page made is recorded, to show that nothing
 * but the service and the page's own origin was asked (no CDN, no api.segment.io metrics).
 */

interface SeenRequest {
  method: string;
  url: string;
  /** The reply's status once it came; null while none came, or when the request failed. */
  status: number | null;
  failure: string | null;
}

/** What the page tells of a call of the library: its messageId, and why its delivery failed, if it did. */
interface CallOutcome {
  messageId: string;
  failed: string | null;
}

interface LeadsPage {
  leads: { userId: string | null; anonymousId: string | null }[];
  total: { count: number; exact: boolean };
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const bundlePath = '/analytics-next.mjs';

/** Records every request the pages of `context` make, and its reply's status or failure, as they come. */
function recordRequests(context: BrowserContext): SeenRequest[] {
  const seen: SeenRequest[] = [];
  const byRequest = new Map<object, SeenRequest>();
  context.on('request', (request) => {
    const entry: SeenRequest = { method: request.method(), url: request.url(), status: null, failure: null };
    byRequest.set(request, entry);
    seen.push(entry);
  });
  context.on('response', (response) => {
    const entry = byRequest.get(response.request());
    if (entry) entry.status = response.status();
  });
  context.on('requestfailed', (request) => {
    const entry = byRequest.get(request);
    if (entry) entry.failure = request.failure()?.errorText ?? 'failed';
  });
  return seen;
}

/**
 * A page of the shop that loads the bundled analytics-next from its own origin and makes
 * `window.analytics` (an AnalyticsBrowser) with `settings` and `options` (JSON).
 */
function analyticsPage(settings: Record<string, unknown>, options: Record<string, unknown>): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pricing - A shop</title><link rel="icon" href="data:,"></head>
<body><h1>A shop</h1>
<script type="module">
import { AnalyticsBrowser } from ${literal(bundlePath)};
window.analytics = AnalyticsBrowser.load(${literal(settings)}, ${literal(options)});
</script></body></html>`;
}

/** Page code: awaits `call` (a call of window.analytics giving a Context) and returns a CallOutcome. */
const outcomeOf = (call: string): string => `{
  const ctx = await ${call};
  const failed = ctx.failedDelivery();
  return { messageId: ctx.event.messageId, failed: failed === undefined ? null : String(failed.reason) };
}`;

describe('Segment analytics-next in a browser against the service (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  let shop: SecondOrigin;
  servedApp((started) => ({ app, account } = started), { projections: true });
  usesBrowser((launched) => (browser = launched));
  usesSecondOrigin((origin) => (shop = origin));

  before(async function () {
    // The first run of a machine bundles the library (a second or two); later runs reuse the file.
    this.timeout(60_000);
    shop.serve(bundlePath, await analyticsNextBundle(), 'text/javascript; charset=utf-8');
  });

  let watched: WatchedPage;
  let requests: SeenRequest[];
  beforeEach(async () => {
    watched = await openPage(browser);
    requests = recordRequests(watched.context);
  });
  afterEach(async () => {
    await watched.close();
  });

  const lead = (id: string): Promise<Lead> => readApi<Lead>(app, account, `/leads/${encodeURIComponent(id)}`);
  const serviceOrigin = (): string => new URL(app.baseUrl).origin;
  const serviceHost = (): string => new URL(app.baseUrl).host;

  /** Opens `url` and waits until analytics-next has loaded its settings and registered its plugins. */
  async function openAnalytics(url: string): Promise<void> {
    await watched.page.goto(url);
    const loaded = await watched.page
      .waitForFunction('window.analytics !== undefined', undefined, { timeout: 5_000 })
      .then(() => true, () => false);
    if (!loaded) throw new Error(`the page made no window.analytics (did the bundle load?): ${watched.problems.join('; ') || 'no error reported'}`);
    await inPage(watched.page, 'await window.analytics;');
  }

  /** The anonymousId analytics-next made for the visitor, as the page reads it. */
  const anonymousIdInPage = (): Promise<string> => inPage<string>(watched.page, 'return (await window.analytics.user()).anonymousId();');

  /** Waits until the lead `userId` exists with `anonymousId` merged into it, then until every projection is done. */
  async function untilMerged(userId: string, anonymousId: string): Promise<Lead> {
    let last: unknown;
    await eventually(
      async () => {
        const reply = await app.get<Lead>(`/admin/v1/accounts/${account.licenseCode}/leads/${encodeURIComponent(userId)}`, `Bearer ${account.accessToken}`);
        last = reply.body;
        return reply.status === 200 && reply.body.anonymousIds.includes(anonymousId);
      },
      10_000,
      () => `lead ${userId} with ${anonymousId} merged into it; last seen: ${JSON.stringify(last)}`,
    );
    await app.projected();
    return lead(userId);
  }

  /** Asserts the page asked nothing of any origin but its own and the service's. */
  function expectNoOtherHosts(): void {
    const elsewhere = requests.filter((r) => ![shop.origin, serviceOrigin()].includes(new URL(r.url).origin));
    expect(elsewhere.map((r) => `${r.method} ${r.url}`), 'requests to other hosts than the service and the page').to.deep.equal([]);
  }

  /** What the page asked of the service: `<method> <path> <status or failure>`, in order; nothing of another host. */
  function askedOfService(): string[] {
    expectNoOtherHosts();
    return requests.filter((r) => new URL(r.url).origin === serviceOrigin()).map((r) => `${r.method} ${new URL(r.url).pathname} ${r.status ?? r.failure}`);
  }

  it('an anonymous visitor views two pages, landing with utm tags, then identifies: one lead, the anonymous profile merged into it, both page views in its timeline, nothing asked of any other host', async () => {
    const browserKey = await createBrowserKey(app, account, [shop.origin], 'analytics-next');
    const settings = { writeKey: browserKey, cdnURL: app.baseUrl };
    const options = { integrations: { 'Segment.io': { apiHost: `${serviceHost()}/v1`, protocol: 'http' } } };
    const url = shop.page(analyticsPage(settings, options));
    await openAnalytics(`${url}?utm_source=newsletter&utm_medium=email&utm_campaign=spring`);

    const visitor = await anonymousIdInPage();
    expect(visitor, 'the anonymousId analytics-next made').to.match(uuid);
    const landing = await inPage<CallOutcome>(watched.page, outcomeOf('window.analytics.page()'));
    const pricing = await inPage<CallOutcome>(watched.page, outcomeOf("window.analytics.page('Docs', 'Pricing', { plan: 'pro' })"));
    const identified = await inPage<CallOutcome>(watched.page, outcomeOf("window.analytics.identify('user-1', { email: 'user-1@example.com', plan: 'pro' })"));
    expectNoOtherHosts();
    expect([landing, pricing, identified].map((o) => o.failed), 'delivery failures the library saw').to.deep.equal([null, null, null]);
    expect(await anonymousIdInPage(), 'the anonymousId after identify').to.equal(visitor);

    const known = await untilMerged('user-1', visitor);
    expect(known.anonymousIds).to.deep.equal([visitor]);
    expect(known).to.include({ userId: 'user-1', email: 'user-1@example.com', utm_source: 'newsletter', device_type: 'desktop' });
    expect(known.attributes).to.include({ plan: 'pro', utm_medium: 'email', utm_campaign: 'spring' });
    // The anonymous id leads to the known user, and the leads list holds the one person.
    expect((await lead(visitor)).userId).to.equal('user-1');
    const everyone = await readApi<LeadsPage>(app, account, '/leads?limit=500');
    expect(everyone.leads.map((l) => l.userId ?? l.anonymousId), 'every lead').to.deep.equal(['user-1']);
    expect(everyone.total).to.deep.equal({ count: 1, exact: true });

    // Both page views, sent while the visitor was anonymous, are the user's now.
    const timeline = await readApi<TimelinePage>(app, account, '/leads/user-1/timeline?limit=100');
    const viewsInTimeline = timeline.entries.flatMap((entry) => (entry.kind === 'event' ? [entry] : []));
    expect(viewsInTimeline.map((entry) => entry.eventName)).to.deep.equal(['Page Viewed', 'Page Viewed']);
    const events = (await readApi<LeadEventPage>(app, account, '/leads/user-1/events?limit=100')).events;
    expect(events.map((e) => e.eventName)).to.deep.equal(['Page Viewed', 'Page Viewed']);
    for (const event of events) expect(event, 'a page view is the anonymous visitor\'s').to.include({ anonymousId: visitor, userId: null });
    const pageUrl = `${url}?utm_source=newsletter&utm_medium=email&utm_campaign=spring`;
    const byName = new Map(events.map((e) => [e.eventData?.name ?? 'landing', e.eventData]));
    expect(byName.get('landing')).to.include({ url: pageUrl, path: new URL(url).pathname, title: 'Pricing - A shop' });
    expect(byName.get('Pricing')).to.include({ name: 'Pricing', category: 'Docs', plan: 'pro', url: pageUrl });

    // The stored events name the library and its messages.
    const stored = (await app.events()).filter((e) => (e.metadata.source as { api?: string } | undefined)?.api === 'segment');
    const sources = stored.map((e) => e.metadata.source as { messageId?: string; library?: string });
    expect(new Set(sources.map((s) => s.messageId))).to.deep.equal(new Set([landing.messageId, pricing.messageId, identified.messageId]));
    for (const source of sources) expect(source.library).to.equal(`analytics.js npm:next-${analyticsNextVersion}`);

    // The settings from the service (cdnURL), the three calls to its short paths, all answered 200.
    expect(askedOfService()).to.deep.equal([`GET /v1/projects/${browserKey}/settings 200`, 'POST /v1/p 200', 'POST /v1/p 200', 'POST /v1/i 200']);
    watched.expectNoProblems();
  });

  it('loaded with cdnURL alone: the settings document sends the calls to the service', async () => {
    const browserKey = await createBrowserKey(app, account, [shop.origin], 'analytics-next, cdnURL only');
    await openAnalytics(shop.page(analyticsPage({ writeKey: browserKey, cdnURL: app.baseUrl }, {})));
    const visitor = await anonymousIdInPage();
    const viewed = await inPage<CallOutcome>(watched.page, outcomeOf('window.analytics.page()'));
    const identified = await inPage<CallOutcome>(watched.page, outcomeOf("window.analytics.identify('user-2', { email: 'user-2@example.com' })"));
    expectNoOtherHosts();
    expect([viewed.failed, identified.failed], 'delivery failures the library saw').to.deep.equal([null, null]);

    const known = await untilMerged('user-2', visitor);
    expect(known).to.include({ email: 'user-2@example.com' });
    expect((await readApi<LeadEventPage>(app, account, '/leads/user-2/events?limit=100')).events.map((e) => e.eventName)).to.deep.equal(['Page Viewed']);
    expect(askedOfService()).to.deep.equal([`GET /v1/projects/${browserKey}/settings 200`, 'POST /v1/p 200', 'POST /v1/i 200']);
    watched.expectNoProblems();
  });

  it("with analytics-next's batching delivery: the three calls in one batch to /v1/b, the anonymous profile merged", async () => {
    const browserKey = await createBrowserKey(app, account, [shop.origin], 'analytics-next, batching');
    const options = {
      integrations: { 'Segment.io': { apiHost: `${serviceHost()}/v1`, protocol: 'http', deliveryStrategy: { strategy: 'batching', config: { size: 3, timeout: 60_000 } } } },
    };
    await openAnalytics(shop.page(analyticsPage({ writeKey: browserKey, cdnURL: app.baseUrl }, options)));
    const visitor = await anonymousIdInPage();
    // The batch goes once it holds three messages: every call resolves then.
    const outcomes = await inPage<CallOutcome[]>(
      watched.page,
      `const calls = [window.analytics.page(), window.analytics.page('Pricing'), window.analytics.identify('user-3', { email: 'user-3@example.com' })];
      return Promise.all(calls.map(async (call) => ${outcomeOf('call')}));`,
    );
    expectNoOtherHosts();
    expect(outcomes.map((o) => o.failed), 'delivery failures the library saw').to.deep.equal([null, null, null]);

    const known = await untilMerged('user-3', visitor);
    expect(known).to.include({ email: 'user-3@example.com' });
    const events = (await readApi<LeadEventPage>(app, account, '/leads/user-3/events?limit=100')).events;
    expect(events.map((e) => e.eventName)).to.deep.equal(['Page Viewed', 'Page Viewed']);
    expect(askedOfService()).to.deep.equal([`GET /v1/projects/${browserKey}/settings 200`, 'POST /v1/b 200']);
    watched.expectNoProblems();
  });
});
