import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, usesBrowser, type WatchedPage } from './support/browser.js';
import { until } from './support/eventually.js';
import {
  CountingRelay,
  createBrowserKey,
  fetchFromPage,
  inPage,
  literal,
  liveItems,
  openTracker,
  plainPage,
  readApi,
  trackerPage,
  usesSecondOrigin,
  cookie,
  type PageReply,
  type SecondOrigin,
} from './support/second-origin.js';

/**
 * Browser keys and CORS (docs/browser.md), in a real Chromium with its web security on, from pages
 * of another origin than the service's: what a page can send, and what it can read of a refusal.
 */

interface FormA {
  error: string;
  code: number;
}

interface TrackLookup {
  events: { type: string; data: Record<string, unknown> }[];
}

interface WarningGroups {
  groups: { reason: string; endpoint: string; count: number; examples: { status: number; message: string }[] }[];
}

/** Asserts the page read a reply of `status` in form A and gives its error text. */
function readable(reply: PageReply, status: number): string {
  if (reply.failed) throw new Error(`the page could not read the reply (expected ${status}): ${reply.error}`);
  expect(reply.status, JSON.stringify(reply.body)).to.equal(status);
  expect(reply.body, JSON.stringify(reply.body)).to.be.an('object').that.has.all.keys('error', 'code');
  const body = reply.body as FormA;
  expect(body.code).to.equal(status);
  expect(body.error).to.be.a('string').that.has.length.above(0);
  return body.error;
}

/** Asserts the page read a 200 `{ response: { status: 'queued', trackID } }` and gives the trackID. */
function queuedInPage(reply: PageReply): string {
  if (reply.failed) throw new Error(`the page could not read the reply: ${reply.error}`);
  expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
  const response = (reply.body as { response?: { status?: string; trackID?: string } }).response;
  expect(response?.status, JSON.stringify(reply.body)).to.equal('queued');
  expect(response?.trackID).to.be.a('string');
  return response?.trackID as string;
}

/** A reply header as the page read it (null when CORS hid it). */
const header = (reply: PageReply, name: string): string | null => (reply.failed ? null : (reply.headers[name] ?? null));

/** Fails the test on an uncaught exception in the page (refused loads are expected here, console errors of theirs too). */
function expectNothingUncaught(watched: WatchedPage): void {
  expect(watched.problems.filter((problem) => problem.startsWith('uncaught'))).to.deep.equal([]);
}

const aWrongKey = (): string => `tbk_${randomBytes(24).toString('base64url')}`;

describe('browser keys and CORS from a page of another origin (e2e)', () => {
  let app: TestApp;
  let browser: Browser;
  let shop: SecondOrigin;
  let elsewhere: SecondOrigin;
  servedApp((started) => ({ app } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  usesSecondOrigin((origin) => (shop = origin));
  usesSecondOrigin((origin) => (elsewhere = origin));

  let account: Credentials;
  let browserKey: string;
  let watched: WatchedPage;
  let accounts = 0;
  beforeEach(async () => {
    accounts += 1;
    account = await app.account(`cors-${accounts}`);
    browserKey = await createBrowserKey(app, account, [shop.origin]);
    watched = await openPage(browser);
  });
  afterEach(async () => {
    await watched.close();
  });

  const ingestUrl = (base: string, endpoint: string, query = ''): string => `${base}/v1/accounts/${account.licenseCode}/${endpoint}${query}`;

  it('an allowed origin delivers: the SDK loaded from the service sends, and Live events and the track lookup show the items', async () => {
    const { page, context } = watched;
    const url = shop.page(
      trackerPage(
        { baseUrl: app.baseUrl, licenseCode: account.licenseCode, browserKey },
        `tracker.page(); tracker.track({ eventName: 'Signed up', eventData: { plan: 'pro' } });`,
      ),
    );
    await openTracker(page, url, watched.problems);
    await inPage(page, 'await tracker.flush();');
    const anonymousId = await cookie(context, 'trk_aid');
    expect(anonymousId, 'the trk_aid cookie').to.be.a('string');

    await until(async () => (await liveItems(app, account, 'kind=events')).length >= 2, 10_000, () => 'Live events never listed the two events of the page');
    await app.projected();
    const events = await liveItems(app, account, 'kind=events');
    expect(events.map((item) => item.name).sort()).to.deep.equal(['Signed up', 'page_view']);
    for (const item of events) expect(item.anonymousId, item.name ?? '').to.equal(anonymousId);
    const signedUp = events.find((item) => item.name === 'Signed up');
    expect(signedUp?.preview).to.equal(JSON.stringify({ plan: 'pro' }));

    const lookup = await readApi<TrackLookup>(app, account, `/track/${signedUp?.trackID}`);
    expect(lookup.events.map((event) => event.type)).to.deep.equal(['EventTracked']);
    expect(lookup.events[0]?.data).to.deep.include({ eventName: 'Signed up', eventData: { plan: 'pro' }, anonymousId });
    const pageView = events.find((item) => item.name === 'page_view');
    const viewed = await readApi<TrackLookup>(app, account, `/track/${pageView?.trackID}`);
    expect(viewed.events[0]?.data.eventData).to.deep.include({ url, path: new URL(url).pathname, title: 'A shop' });
    expect(await inPage(page, 'return window.trackerErrors;')).to.deep.equal([]);
    watched.expectNoProblems();
  });

  it('an allowed origin posts with the key in a header or in the query string, and with an idempotencyKey, and reads the replies', async () => {
    const { page } = watched;
    await page.goto(shop.serve('/plain', plainPage));
    const withHeader = await fetchFromPage(
      page,
      {
        url: ingestUrl(app.baseUrl, 'events'),
        headers: { authorization: `Bearer ${browserKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ anonymousId: 'a-cors', eventName: 'Header' }),
      },
      ['x-request-id'],
    );
    const first = queuedInPage(withHeader);
    expect(header(withHeader, 'x-request-id'), 'X-Request-Id, an exposed header').to.be.a('string').that.has.length.above(0);
    const inQuery = await fetchFromPage(page, {
      url: ingestUrl(app.baseUrl, 'events/bulk', `?key=${browserKey}`),
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify([{ anonymousId: 'a-cors', eventName: 'Query' }]),
    });
    if (inQuery.failed) throw new Error(inQuery.error);
    expect(inQuery.status, JSON.stringify(inQuery.body)).to.equal(200);
    const results = (inQuery.body as { response: { status: string; trackID: string }[] }).response;
    expect(results.map((result) => result.status)).to.deep.equal(['queued']);
    // Sent again under the same idempotencyKey (as a page re-sends a batch): replayed, which the page can read.
    const replay = (): Promise<PageReply> =>
      fetchFromPage(
        page,
        {
          url: ingestUrl(app.baseUrl, 'events/bulk', `?key=${browserKey}&idempotencyKey=batch-1`),
          headers: { 'content-type': 'text/plain' },
          body: JSON.stringify([{ anonymousId: 'a-cors', eventName: 'Once' }]),
        },
        ['idempotent-replayed'],
      );
    const sent = await replay();
    const again = await replay();
    if (sent.failed || again.failed) throw new Error(`${JSON.stringify(sent)} ${JSON.stringify(again)}`);
    expect(again.body).to.deep.equal(sent.body);
    expect(header(again, 'idempotent-replayed'), 'Idempotent-Replayed as the page reads it').to.equal('true');
    const once = (sent.body as { response: { trackID: string }[] }).response[0]?.trackID;
    await app.projected();
    const names = (await liveItems(app, account, 'kind=events')).map((item) => [item.trackID, item.name]);
    expect(names).to.deep.equal([
      [once, 'Once'],
      [results[0]?.trackID, 'Query'],
      [first, 'Header'],
    ]);
    watched.expectNoProblems();
  });

  it('a disallowed origin gets the 403 naming it, which the page reads; nothing is stored and Warnings show it', async () => {
    const { page } = watched;
    await page.goto(elsewhere.serve('/plain', plainPage));
    const refusals = [
      await fetchFromPage(page, {
        url: ingestUrl(app.baseUrl, 'events'),
        headers: { authorization: `Bearer ${browserKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ anonymousId: 'a-evil', eventName: 'Refused' }),
      }),
      await fetchFromPage(page, {
        url: ingestUrl(app.baseUrl, 'events/bulk', `?key=${browserKey}`),
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify([{ anonymousId: 'a-evil', eventName: 'Refused' }]),
      }),
    ];
    for (const refusal of refusals) {
      expect(readable(refusal, 403)).to.equal(`origin ${elsewhere.origin} is not allowed for this browser key`);
    }
    await app.projected();
    expect(await liveItems(app, account)).to.deep.equal([]);

    // Warnings are written once a second; a group is of one reason and one endpoint.
    let groups: WarningGroups['groups'] = [];
    await until(
      async () => {
        groups = (await readApi<WarningGroups>(app, account, '/warnings')).groups.filter((g) => g.reason === 'origin_not_allowed');
        return groups.reduce((sum, g) => sum + g.count, 0) >= 2;
      },
      10_000,
      () => `the origin_not_allowed groups of Warnings: ${JSON.stringify(groups)}`,
    );
    expect(groups.map((g) => [g.endpoint, g.count]).sort()).to.deep.equal([
      ['events', 1],
      ['events/bulk', 1],
    ]);
    for (const group of groups) {
      expect(group.examples[0]?.status).to.equal(403);
      expect(group.examples[0]?.message).to.include(elsewhere.origin);
    }
    expectNothingUncaught(watched);
  });

  it('error replies are readable by the page: 401 for a wrong key, 403 for an access token, 413 for a body too big', async () => {
    const { page } = watched;
    await page.goto(shop.serve('/plain', plainPage));
    const event = JSON.stringify({ anonymousId: 'a-errors', eventName: 'Refused' });
    readable(
      await fetchFromPage(page, { url: ingestUrl(app.baseUrl, 'events'), headers: { authorization: `Bearer ${aWrongKey()}`, 'content-type': 'application/json' }, body: event }),
      401,
    );
    readable(await fetchFromPage(page, { url: ingestUrl(app.baseUrl, 'events', `?key=${aWrongKey()}`), headers: { 'content-type': 'text/plain' }, body: event }), 401);
    const secret = readable(
      await fetchFromPage(page, { url: ingestUrl(app.baseUrl, 'events'), headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' }, body: event }),
      403,
    );
    expect(secret).to.match(/access token is secret and must not be used from a web page/);
    // An item is at most 1 MiB.
    const tooBig = readable(
      await fetchFromPage(page, { url: ingestUrl(app.baseUrl, 'events', `?key=${browserKey}`), headers: { 'content-type': 'text/plain' }, paddedTo: 1_100_000 }),
      413,
    );
    expect(tooBig).to.match(/larger than/);
    await app.projected();
    expect(await liveItems(app, account)).to.deep.equal([]);
    expectNothingUncaught(watched);
  });

  it('preflights are cached: two posts with Authorization and JSON make one OPTIONS; text/plain with ?key= and the SDK make none', async () => {
    const relay = await CountingRelay.start(app.baseUrl);
    try {
      const { page } = watched;
      const url = shop.page(trackerPage({ baseUrl: relay.baseUrl, licenseCode: account.licenseCode, browserKey }, '', `${app.baseUrl}/sdk/tracking.mjs`));
      await openTracker(page, url, watched.problems);
      for (const eventName of ['First', 'Second']) {
        queuedInPage(
          await fetchFromPage(page, {
            url: ingestUrl(relay.baseUrl, 'events'),
            headers: { authorization: `Bearer ${browserKey}`, 'content-type': 'application/json' },
            body: JSON.stringify({ anonymousId: 'a-preflight', eventName }),
          }),
        );
      }
      const preflights = relay.ingest('OPTIONS');
      expect(preflights, 'preflights').to.have.length(1);
      expect(preflights[0]?.headers['access-control-request-headers']).to.include('authorization');
      // Chromium keeps a preflight 5 s without Access-Control-Max-Age: what makes it last is the header.
      expect(preflights[0]?.reply?.status).to.equal(204);
      expect(preflights[0]?.reply?.headers).to.include({
        'access-control-allow-origin': shop.origin,
        'access-control-allow-methods': 'POST',
        'access-control-max-age': '7200',
      });

      queuedInPage(
        await fetchFromPage(page, {
          url: ingestUrl(relay.baseUrl, 'events', `?key=${browserKey}`),
          headers: { 'content-type': 'text/plain' },
          body: JSON.stringify({ anonymousId: 'a-preflight', eventName: 'Plain' }),
        }),
      );
      await inPage(page, `tracker.track({ eventName: 'From the SDK' }); await tracker.flush();`);
      const sdkPosts = relay.ingest('POST').filter((request) => request.url.includes('/bulk'));
      expect(sdkPosts.length, 'the SDK posted').to.be.at.least(1);
      for (const post of sdkPosts) expect(post.headers['content-type']).to.match(/^text\/plain/);
      expect(relay.ingest('OPTIONS'), 'preflights').to.have.length(1);
      await until(
        async () => (await liveItems(app, account, 'name=From%20the%20SDK')).length === 1,
        10_000,
        () => 'the event of the SDK is not in Live events',
      );
      watched.expectNoProblems();
    } finally {
      await relay.close();
    }
  });

  it('serves the script-tag build to another origin with its integrity from the manifest', async () => {
    const manifest = await app.get<{ version: string; files: { name: string; path: string; integrity: string }[] }>('/sdk/manifest.json');
    expect(manifest.status).to.equal(200);
    const script = manifest.body.files.find((file) => file.name === 'tracking.js');
    expect(script?.integrity).to.match(/^sha384-/);
    const { page } = watched;
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>Tag</title><link rel="icon" href="data:,"></head><body>
<script src=${literal(app.baseUrl + (script?.path ?? ''))} integrity=${literal(script?.integrity)} crossorigin="anonymous"></script>
<script>
window.made = typeof Tracking === 'object' && typeof Tracking.createTracker === 'function';
</script></body></html>`;
    await page.goto(shop.page(html));
    expect(await inPage(page, 'return window.made;')).to.equal(true);
    watched.expectNoProblems();
  });
});

describe('browser keys over their per-address limit, from a page (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  let shop: SecondOrigin;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', config: { browserAddressPerMinute: 3 } });
  usesBrowser((launched) => (browser = launched));
  usesSecondOrigin((origin) => (shop = origin));

  it('answers 429 with a Retry-After the page can read', async () => {
    const browserKey = await createBrowserKey(app, account, [shop.origin]);
    const watched = await openPage(browser);
    try {
      await watched.page.goto(shop.serve('/plain', plainPage));
      const post = () =>
        fetchFromPage(
          watched.page,
          {
            url: `${app.baseUrl}/v1/accounts/${account.licenseCode}/events?key=${browserKey}`,
            headers: { 'content-type': 'text/plain' },
            body: JSON.stringify({ anonymousId: 'a-limited', eventName: 'Limited' }),
          },
          ['retry-after'],
        );
      for (let i = 0; i < 3; i++) queuedInPage(await post());
      const over = await post();
      readable(over, 429);
      const retryAfter = header(over, 'retry-after');
      expect(retryAfter, 'Retry-After as the page reads it').to.match(/^[1-9]\d*$/);
      expect(Number(retryAfter)).to.be.at.most(60);
      expectNothingUncaught(watched);
    } finally {
      await watched.close();
    }
  });
});
