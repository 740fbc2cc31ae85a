import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { accountIdOf } from './support/account-replay.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { until } from './support/eventually.js';
import { bulkResults, queued } from './support/replies.js';

/**
 * The Leads page's state in its URL (reload, Back, a shared link), its total, its custom attribute
 * filter, and the lead page's empty attributes and times, in a real Chromium.
 */
const injection = '<img src=x onerror=alert(1)>';

const leadRows = (page: Page) => page.locator('table.data tbody tr');
/** The ids of the leads listed, top to bottom. */
const listedIds = (page: Page) => page.locator('table.data tbody tr td:first-child a').allTextContents();
async function idsBecome(page: Page, ids: string[]): Promise<void> {
  let shown: string[] = [];
  await until(
    async () => JSON.stringify((shown = await listedIds(page))) === JSON.stringify(ids),
    5_000,
    () => `the leads listed are ${JSON.stringify(shown)}, not ${JSON.stringify(ids)}`,
  );
}
const query = (page: Page): Record<string, string> => Object.fromEntries(new URL(page.url()).searchParams);
const totalText = (page: Page) => page.locator('p.total').textContent();

describe('dashboard leads: state in the URL, total, attribute filter; the lead page (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));

  before(async () => {
    other = await app.account('Globex');
    const known = Array.from({ length: 12 }, (_, i) => ({
      userId: `k-${String(i + 1).padStart(2, '0')}`,
      email: `k-${i + 1}@example.com`,
      attributes: { plan: i % 3 === 0 ? 'gold' : 'free', seats: i },
    }));
    const anonymous = [{ anonymousId: 'a-1', attributes: { plan: injection } }];
    for (const result of bulkResults(await app.ingest(account, 'users/bulk', [...known, ...anonymous]))) expect(result.status).to.equal('queued');
    for (const result of bulkResults(await app.ingest(other, 'users/bulk', [{ userId: 'globex-gold', attributes: { plan: 'gold' } }]))) {
      expect(result.status).to.equal('queued');
    }
    await app.projected();
  });

  it('keeps search, kind, page size and page in the URL: a reload, Back from a lead and a shared link show the same page', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads');
      await idsBecome(page, ['a-1', ...Array.from({ length: 12 }, (_, i) => `k-${String(12 - i).padStart(2, '0')}`)]);
      const entries = await page.evaluate('history.length');

      // Typing replaces the history entry: Back is not flooded by every search typed.
      await page.getByLabel('Search leads').fill('k-');
      await idsBecome(page, Array.from({ length: 12 }, (_, i) => `k-${String(12 - i).padStart(2, '0')}`));
      expect(query(page)).to.deep.equal({ q: 'k-' });
      expect(await page.evaluate('history.length')).to.equal(entries);
      await page.getByLabel('Kind').selectOption('known');
      await page.getByLabel('Per page').selectOption('10');
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2', { exact: true }).waitFor();
      await idsBecome(page, ['k-02', 'k-01']);
      expect(query(page)).to.include({ q: 'k-', kind: 'known', limit: '10' }).and.to.have.property('cursor');

      // Back and Forward step through the pages and filters, one each.
      await page.goBack();
      await page.getByText('Page 1', { exact: true }).waitFor();
      await leadRows(page).nth(9).waitFor();
      expect(query(page)).to.deep.equal({ q: 'k-', kind: 'known', limit: '10' });
      await page.goBack();
      await leadRows(page).nth(11).waitFor();
      expect(query(page)).to.deep.equal({ q: 'k-', kind: 'known' });
      expect(await page.getByLabel('Per page').inputValue()).to.equal('25');
      await page.goForward();
      await page.goForward();
      await page.getByText('Page 2', { exact: true }).waitFor();
      await idsBecome(page, ['k-02', 'k-01']);

      await page.reload();
      await idsBecome(page, ['k-02', 'k-01']);
      await page.getByText('Page 2', { exact: true }).waitFor();
      expect(await page.getByLabel('Search leads').inputValue()).to.equal('k-');
      expect(await page.getByLabel('Kind').inputValue()).to.equal('known');
      expect(await page.getByLabel('Per page').inputValue()).to.equal('10');

      await page.getByRole('link', { name: 'k-01', exact: true }).click();
      await page.getByRole('heading', { name: 'Lead k-01' }).waitFor();
      await page.goBack();
      await idsBecome(page, ['k-02', 'k-01']);
      await page.getByText('Page 2', { exact: true }).waitFor();
      expect(await page.getByLabel('Search leads').inputValue()).to.equal('k-');
      // The lead's own way back goes to the same page too.
      await page.getByRole('link', { name: 'k-02', exact: true }).click();
      await page.getByRole('link', { name: 'Back to leads' }).click();
      await idsBecome(page, ['k-02', 'k-01']);
      await page.getByText('Page 2', { exact: true }).waitFor();
      const shared = page.url();
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.getByText('Page 1', { exact: true }).waitFor();
      await leadRows(page).nth(9).waitFor();
      await page.goBack();
      await idsBecome(page, ['k-02', 'k-01']);

      // A link opened in another browser: the same leads, the earlier pages unknown.
      const { page: second, close: closeSecond, expectNoProblems: noProblemsThere } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
      try {
        await signInAsAccount(second, app.baseUrl, account, new URL(shared).pathname + new URL(shared).search);
        await idsBecome(second, ['k-02', 'k-01']);
        await second.getByText('A later page', { exact: true }).waitFor();
        await second.getByRole('button', { name: 'First page' }).click();
        await second.getByText('Page 1', { exact: true }).waitFor();
        await leadRows(second).nth(9).waitFor();
        noProblemsThere();
      } finally {
        await closeSecond();
      }
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it("shows the list's total, exact, and an estimate said to be one past what is counted", async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads?limit=10');
      await page.getByText('13 leads', { exact: true }).waitFor();
      await page.getByLabel('Search leads').fill('k-1@');
      await page.getByText('1 lead', { exact: true }).waitFor();
      await page.getByLabel('Search leads').fill('nobody');
      await page.getByText('0 leads', { exact: true }).waitFor();
      expectNoProblems();
    } finally {
      await close();
    }

    // An account of 12,000 leads, written into the read model: more than the service counts.
    const big = await app.account('Big');
    await app.pool.query(
      `INSERT INTO leads (account_id, profile_kind, profile_id, user_id, opt_in_sms, opt_in_email, date_identified, points, attributes,
         attribute_types, own_keys, anonymous_ids, search_text, version, created_position, created_at, changed_at)
       SELECT $1::uuid, 'user', 'big-' || n, 'big-' || n, false, false, now(), 0, '{}', '{}', '{}', '{}', 'big-' || n, 1, 1000000 + n, now(), now()
       FROM generate_series(1, 12000) AS n`,
      [await accountIdOf(app, big)],
    );
    await app.pool.query('ANALYZE leads');
    const bigPage = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(bigPage.page, app.baseUrl, big, '/dashboard/leads');
      await bigPage.page.locator('p.total').waitFor();
      expect(await totalText(bigPage.page)).to.match(/^about 1[0-4],\d00 leads \(an estimate\)$/);
      bigPage.expectNoProblems();
    } finally {
      await bigPage.close();
    }
  });

  it("filters by a custom attribute's value, in the URL, of this account only, a client's value shown as text", async () => {
    // The name no attribute can have gets 400, which the browser logs as a failed load.
    const expectedFailedLoads = [...signInFailedLoads, `/admin/v1/accounts/${account.licenseCode}/leads`];
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads');
      await page.getByLabel('Custom attribute').fill('plan');
      await page.getByLabel('Attribute value').fill('gold');
      await idsBecome(page, ['k-10', 'k-07', 'k-04', 'k-01']);
      await page.getByText('4 leads', { exact: true }).waitFor();
      expect(query(page)).to.deep.equal({ attribute: 'plan', value: 'gold' });
      // A number, typed as text.
      await page.getByLabel('Custom attribute').fill('seats');
      await page.getByLabel('Attribute value').fill('11');
      await idsBecome(page, ['k-12']);
      // The hostile value an anonymous lead holds finds it, and runs nothing.
      await page.getByLabel('Custom attribute').fill('plan');
      await page.getByLabel('Attribute value').fill(injection);
      await idsBecome(page, ['a-1']);
      await page.reload();
      await idsBecome(page, ['a-1']);
      expect(await page.getByLabel('Attribute value').inputValue()).to.equal(injection);
      expect(await page.locator('img').count()).to.equal(0);
      // A name no attribute can have: the service's reason, as text.
      await page.getByLabel('Custom attribute').fill('Plan');
      await page.getByRole('alert').getByText('attribute must be the name of a custom attribute', { exact: false }).waitFor();
      await page.getByLabel('Custom attribute').fill('');
      await page.getByText('13 leads', { exact: true }).waitFor();
      expect(await listedIds(page)).not.to.include('globex-gold');
      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      await screenshot(page, 'leads-filters-400');
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('hides the system attributes not set at first, shows them on request, and shows date-time attributes and event times as instants in a non-UTC browser', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-t', email: 't@example.com', birth_date: '1990-05-17T00:00:00Z', attributes: { renews_at: '2026-12-01T11:00:00+01:00' } }));
    queued(await app.ingest(account, 'events', { userId: 'u-t', eventName: 'Zoneless', eventTime: '2026-03-01T10:00:00' }));
    await app.projected();
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads, timezoneId: 'America/Los_Angeles' });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads/u-t');
      expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).to.equal('America/Los_Angeles');
      const system = page.getByRole('region', { name: 'System attributes', exact: true });
      const row = (name: string) => system.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) });
      await row('email').waitFor();
      const hide = page.getByLabel('Hide attributes not set');
      expect(await hide.isChecked()).to.equal(true);
      expect(await row('phone').count()).to.equal(0);
      expect(await row('opt_in_sms').locator('td').allTextContents()).to.deep.equal(['BOOL', 'true']);
      await hide.uncheck();
      expect(await row('phone').locator('td').allTextContents()).to.deep.equal(['STRING', 'not set']);
      await hide.check();
      expect(await row('phone').count()).to.equal(0);

      // Date-times: the instant, whatever the browser's zone.
      expect(await row('birth_date').locator('time').getAttribute('datetime')).to.equal('1990-05-17T00:00:00.000Z');
      const custom = page.getByRole('region', { name: 'Custom attributes', exact: true });
      const renews = custom.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'renews_at', exact: true }) });
      expect(await renews.locator('time').getAttribute('datetime')).to.equal('2026-12-01T10:00:00.000Z');
      const event = page.getByRole('region', { name: 'Timeline', exact: true }).getByRole('row').filter({ hasText: 'Event Zoneless' });
      await event.waitFor();
      // Sent without a zone: UTC, which the browser in Los Angeles would have read as 18:00 UTC.
      const eventTime = event.locator('.event-time');
      expect(await eventTime.locator('time').getAttribute('datetime')).to.equal('2026-03-01T10:00:00.000Z');
      expect(await eventTime.getAttribute('title')).to.equal('sent as 2026-03-01T10:00:00');
      expect(await event.textContent()).not.to.contain('18:00');
      await screenshot(page, 'lead-hide-empty-1280');
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
