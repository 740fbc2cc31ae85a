import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { eventually } from './support/eventually.js';
import { itemError, queued } from './support/replies.js';

/**
 * Times the dashboard shows, in browsers far from UTC and in a locale Intl refuses, and a page
 * that fails on its own.
 */

/** To the second, or to the minute where the server keeps only minutes (a token's last use). */
const utcShape = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC$/;
/** The browser's own medium date format ("Nov 25, 2026"), which no page may show any more. */
const localeShape = /\b[A-Z][a-z]{2} \d{1,2}, \d{4}\b/;

/** `iso` as the dashboard shows it: `2026-11-25 15:00:32 UTC`. */
const utcText = (iso: string): string => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

/** `iso` on the clock of `timeZone`, as `2026-11-25 07:00:32`. */
function clockIn(iso: string, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(iso))
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

describe('dashboard times, locales and failing pages (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));

  const bearer = () => `Bearer ${account.accessToken}`;

  it("shows every instant from its UTC value in one format, with the browser's own time and zone on hover", async () => {
    const zone = 'America/Los_Angeles';
    const trackID = queued(await app.ingest(account, 'events', { userId: 'u-times', eventName: 'Zoned', eventTime: '2026-03-01T10:00:00' }));
    itemError(await app.ingest(account, 'events', { userId: 'u-times' }));
    const item = await eventually(
      async () => (await app.get<{ items: { trackID: string; receivedAt: string }[] }>(`/admin/v1/accounts/${account.licenseCode}/live`, bearer())).body.items.find((i) => i.trackID === trackID),
      10_000,
      () => `${trackID} not listed`,
    );
    const watched = await openPage(browser, { timezoneId: zone, expectedFailedLoads: signInFailedLoads });
    const { page } = watched;
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/live');
      expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).to.equal(zone);
      const received = page.getByRole('row').filter({ hasText: trackID }).locator('td[data-label="Received"] time');
      await received.waitFor();
      expect(await received.textContent()).to.equal(utcText(item.receivedAt));
      const hover = (await received.getAttribute('title')) ?? '';
      expect(hover).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} America\/Los_Angeles \(UTC-0[78]:00\) in this browser$/);
      expect(hover.slice(0, 19)).to.equal(clockIn(item.receivedAt, zone));

      // The other pages that show times: the same format, never the browser's locale format.
      for (const [path, heading] of [
        ['/dashboard/warnings', 'Ingestion warnings'],
        ['/dashboard/credentials', 'Credentials'],
        ['/dashboard', 'Overview'],
      ] as const) {
        await page.goto(app.baseUrl + path);
        await page.getByRole('heading', { name: heading, exact: true }).waitFor();
        const shown = page.locator('main time').first();
        await shown.waitFor({ timeout: 15_000 });
        const times = await page.locator('main time').allTextContents();
        for (const text of times) expect(text, path).to.match(utcShape);
        expect(await page.locator('main').textContent(), path).to.not.match(localeShape);
      }
      watched.expectNoProblems();
    } finally {
      await watched.close();
    }
  });

  it('renders in a locale Intl refuses, loading the chart library only on the page that draws charts', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-posix', attributes: {} }));
    const watched = await openPage(browser, { language: 'en-US@posix', timezoneId: 'Europe/Berlin', expectedFailedLoads: signInFailedLoads });
    const { page } = watched;
    const chartLoads: string[] = [];
    page.on('request', (request) => {
      if (/uplot/i.test(request.url())) chartLoads.push(request.url());
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads');
      expect(await page.evaluate('navigator.language')).to.equal('en-US@posix');
      await page.getByRole('heading', { name: 'Leads', exact: true }).waitFor();
      expect(chartLoads, 'the chart library, before any chart').to.deep.equal([]);

      await page.getByRole('link', { name: 'Overview' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      await page.locator('.chart canvas').first().waitFor({ timeout: 15_000 });
      expect(chartLoads.length).to.be.greaterThan(0);
      // The browser's own language again once the library has loaded.
      expect(await page.evaluate('navigator.language')).to.equal('en-US@posix');
      await screenshot(page, 'overview-posix-locale');
      watched.expectNoProblems();
    } finally {
      await watched.close();
    }
  });

  it('shows a page that fails as an error in its place, the rest of the dashboard working', async () => {
    const watched = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    const { page } = watched;
    try {
      // A reply the Overview cannot read (as from a server of another version).
      await page.route(`**/admin/v1/accounts/${account.licenseCode}/overview`, (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{"surprise":true}' }));
      await signInAsAccount(page, app.baseUrl, account, '/dashboard');
      const failed = page.getByRole('alert').filter({ hasText: 'This page failed to show' });
      await failed.waitFor();
      expect(await page.getByRole('heading', { name: 'Overview' }).count()).to.equal(1);
      await page.getByRole('link', { name: 'Leads' }).click();
      await page.getByRole('heading', { name: 'Leads', exact: true }).waitFor();
      expect(await failed.count()).to.equal(0);
    } finally {
      await watched.close();
    }
  });
});
