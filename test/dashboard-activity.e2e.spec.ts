import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { until } from './support/eventually.js';
import { itemError, queued } from './support/replies.js';

/** The Overview and Warnings pages, signed in through the form, on what the real ingest recorded. */

const injection = '<img src=x onerror=alert(1)>';
/** The pages refresh every 10 s; the recorder writes once a second. */
const refreshed = { timeout: 15_000 };

describe('dashboard overview and warnings (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  before(async () => {
    other = await app.account('globex');
  });

  /** Resolves once the recorder (which writes once a second) has written what `done` looks for. */
  const recorded = async <T>(which: string, done: (body: T) => boolean): Promise<void> => {
    let last: T | undefined;
    await until(
      async () => done((last = (await app.get<T>(`/admin/v1/accounts/${account.licenseCode}/${which}`, `Bearer ${account.accessToken}`)).body)),
      5_000,
      () => `${which} never as expected, but ${JSON.stringify(last)}`,
    );
  };

  /** The cells of the totals row of `endpoint` in the table of `period`. */
  const totalsOf = (page: Page, period: string, endpoint: string) =>
    page
      .getByRole('region', { name: `${period}: totals by endpoint` })
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: endpoint, exact: true }) });

  it('shows the accepted and rejected items per endpoint as charts and tables, and the projections lag, at 1280 and 400 px', async () => {
    for (let i = 0; i < 3; i++) queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: `view-${i}` }));
    itemError(await app.ingest(account, 'events', { userId: 'u-1' }));
    queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    queued(await app.ingest(other, 'products', { productId: 'p-other' }));
    // Opened once the counts are written and the read models have caught up, the page shows both
    // on its first load. Caught up only after the page had loaded, the lag waited for the page's
    // next refresh (10 s later), which with the other waits of a loaded machine ran past the
    // test's 30 s.
    await recorded<{ perMinute: { endpoint: string }[] }>('overview', (body) => body.perMinute.some((bucket) => bucket.endpoint === 'users'));
    await app.projected();

    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard');
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      for (const period of ['Last hour, per minute', 'Last 7 days, per hour']) {
        await totalsOf(page, period, 'events').filter({ hasText: /3\s*1$/ }).waitFor(refreshed);
        expect(await totalsOf(page, period, 'events').locator('td').allTextContents()).to.deep.equal(['3', '1']);
        expect(await totalsOf(page, period, 'users').locator('td').allTextContents()).to.deep.equal(['1', '0']);
        // Another account's traffic is not counted here.
        expect(await totalsOf(page, period, 'products').count()).to.equal(0);
      }
      // Drawn by uPlot on a canvas, with its legend; the table says the same for those who cannot see it.
      // The chart library loads when a chart is first drawn, after the frame that showed the tables: wait for them.
      await page.locator('.chart canvas').nth(1).waitFor();
      expect(await page.locator('.chart canvas').count()).to.equal(2);
      const legend = await page.locator('.chart .u-legend').first().textContent();
      expect(legend).to.include('events accepted').and.include('events rejected').and.include('users accepted');
      expect(await page.getByRole('img', { name: /Last hour, per minute: chart/ }).count()).to.equal(1);
      await page.locator('p.lag').filter({ hasText: /^Read models: caught up/ }).waitFor();
      await screenshot(page, 'overview-1280');

      await page.setViewportSize({ width: 400, height: 800 });
      // The charts follow their box's width (a ResizeObserver), whose change comes a frame later.
      let width = Infinity;
      await until(
        async () => (width = (await page.locator('.chart canvas').first().boundingBox())?.width ?? Infinity) <= 400,
        5_000,
        () => `the first chart is ${width} px wide, not at most 400`,
      );
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      await screenshot(page, 'overview-400');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('groups refused items by reason with the message the client got, and shows their bodies as text, at 1280 and 400 px', async () => {
    const invalid = itemError(await app.ingest(account, 'events', { userId: injection }));
    const bulk = await app.ingest<{ response: { status: string; message?: string }[] }>(account, 'users/bulk', [
      { userId: 'u-ok', attributes: {} },
      { userId: 'u-bad', attributes: 'nope' },
    ]);
    expect(bulk.body.response.map((item) => item.status)).to.deep.equal(['queued', 'error']);
    const bulkMessage = bulk.body.response[1]?.message as string;
    const long = itemError(await app.ingest(account, 'events', { userId: 'u-long', note: 'x'.repeat(3_000) }));
    itemError(await app.ingest(other, 'events', { userId: 'other-account' }));
    await recorded<{ warnings: unknown[] }>('warnings/recent', (body) => body.warnings.length === 4);

    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/warnings');
      await page.getByRole('heading', { name: 'Ingestion warnings' }).waitFor();
      // Grouped by reason, field and endpoint; with the overview test's refusal, three items lack an
      // eventName (the long one too: a missing field is told first) and one bulk element has bad attributes.
      const missingName = page.getByRole('article', { name: 'Refused: schema, eventName, events' });
      await missingName.getByText(/^3 items in 30 days/).waitFor(refreshed);
      const examples = missingName.locator('ol.examples > li');
      expect(await examples.count()).to.equal(3);
      // The latest first: the long body (truncated), then the invalid single item.
      const [latest, fromSingle] = [examples.nth(0), examples.nth(1)];
      expect(await latest.locator('dd.message').textContent()).to.equal(long);
      expect(await latest.textContent()).to.include('truncated');
      expect(await fromSingle.locator('dd.message').textContent()).to.equal(invalid);
      expect(await fromSingle.locator('dd').nth(1).textContent()).to.equal('400');
      expect(await fromSingle.locator('pre.excerpt').textContent()).to.equal(JSON.stringify({ userId: injection }));
      expect(await fromSingle.textContent()).not.to.include('truncated');
      const badAttributes = page.getByRole('article', { name: 'Refused: schema, attributes, users/bulk' });
      expect(await badAttributes.getByText(/^1 item in 30 days/).count()).to.equal(1);
      const fromBulk = badAttributes.locator('ol.examples > li');
      expect(await fromBulk.count()).to.equal(1);
      expect(await fromBulk.locator('dd.message').textContent()).to.equal(bulkMessage);
      expect(await fromBulk.locator('pre.excerpt').textContent()).to.equal('{"userId":"u-bad","attributes":"nope"}');
      // The client's text stays text: no image, nothing ran.
      expect(await page.locator('img').count()).to.equal(0);
      expect(dialogs).to.deep.equal([]);

      // The recent list, newest first; another account's refusal is in neither.
      const recent = page.getByRole('region', { name: 'Latest refused items' }).locator('tbody tr');
      expect(await recent.count()).to.equal(4);
      expect(await recent.first().locator('td.message').textContent()).to.equal(long);
      expect(await page.getByText('other-account').count()).to.equal(0);
      await screenshot(page, 'warnings-1280');

      // The filter narrows the groups and the recent list (asked of the server) alike.
      await page.getByLabel('Field', { exact: true }).selectOption({ label: 'attributes' });
      await missingName.waitFor({ state: 'detached' });
      expect(await badAttributes.count()).to.equal(1);
      // The recent list is asked of the server again at each change of the filter.
      const recentRows = async (count: number): Promise<void> => {
        let rows = 0;
        await until(async () => (rows = await recent.count()) === count, refreshed.timeout, () => `${rows} recent warnings listed, not ${count}`);
      };
      await recentRows(1);
      expect(await recent.first().locator('td.message').textContent()).to.equal(bulkMessage);
      await page.getByLabel('Field', { exact: true }).selectOption({ label: 'any' });
      await page.getByLabel('Endpoint', { exact: true }).selectOption({ label: 'events' });
      await badAttributes.waitFor({ state: 'detached' });
      await missingName.waitFor();
      await recentRows(3);
      for (const endpoint of await recent.locator('td[data-label="Endpoint"]').allTextContents()) expect(endpoint).to.equal('events');
      await page.getByLabel('Endpoint', { exact: true }).selectOption({ label: 'any' });
      await badAttributes.waitFor();

      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      await screenshot(page, 'warnings-400');
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
