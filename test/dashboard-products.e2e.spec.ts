import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { until } from './support/eventually.js';
import { bulkResults, queued } from './support/replies.js';

/** The Products pages of the dashboard, fed through the real ingest API and projections. */
const injection = '<img src=x onerror=alert(1)>';

const productRows = (page: Page) => page.locator('table.data tbody tr');
/** The productIds listed, top to bottom. */
const listedIds = (page: Page) => page.locator('table.data tbody tr td:first-child a').allTextContents();
async function rowCountBecomes(page: Page, count: number): Promise<void> {
  let rows = 0;
  await until(async () => (rows = await productRows(page).count()) === count, 5_000, () => `the products table has ${rows} rows, not ${count}`);
}
const productLink = (page: Page, id: string) => page.getByRole('link', { name: id, exact: true });

describe('dashboard products (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  before(async () => {
    other = await app.account('Globex');
    const items = Array.from({ length: 12 }, (_, i) => ({ productId: `sku-${String(i + 1).padStart(2, '0')}`, properties: { price: i + 1 } }));
    for (const result of bulkResults(await app.ingest(account, 'products/bulk', items))) expect(result.status).to.equal('queued');
    queued(await app.ingest(other, 'products', { productId: 'globex-secret', properties: { secret: true } }));
    await app.projected();
  });
  usesBrowser((launched) => (browser = launched));

  it('lists the products newest first, shows one posted while it is open, searches as one types and pages with next and previous', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard');
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Products' }).click();
      await page.getByRole('heading', { name: 'Products' }).waitFor();
      await rowCountBecomes(page, 12);
      expect((await listedIds(page)).slice(0, 2)).to.deep.equal(['sku-12', 'sku-11']);
      expect(await listedIds(page)).not.to.include('globex-secret');

      // Within 2 s of its projection: the first page refreshes every second. Its values are text.
      queued(await app.ingest(account, 'products', { productId: injection, userId: 'u-1', properties: { name: injection } }));
      await app.projected();
      await productLink(page, injection).waitFor({ timeout: 2000 });
      const row = productRows(page).filter({ has: productLink(page, injection) });
      expect(await row.locator('td').allTextContents()).to.include.members([injection, `{"name":"${injection}"}`, 'u-1']);
      expect(await page.locator('img').count()).to.equal(0);

      await page.getByLabel('Per page').selectOption('10');
      await rowCountBecomes(page, 10);
      expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).to.equal(true);
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2', { exact: true }).waitFor();
      await rowCountBecomes(page, 3);
      expect(await listedIds(page)).to.deep.equal(['sku-03', 'sku-02', 'sku-01']);
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).to.equal(true);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.getByText('Page 1', { exact: true }).waitFor();
      await rowCountBecomes(page, 10);

      await page.getByLabel('Search products').fill('SKU-1');
      await rowCountBecomes(page, 3);
      expect(await listedIds(page)).to.deep.equal(['sku-12', 'sku-11', 'sku-10']);
      expect(new URL(page.url()).searchParams.get('q')).to.equal('SKU-1');
      await page.getByLabel('Search products').fill('globex');
      await page.getByText('No product matches.').waitFor();
      await page.getByLabel('Search products').fill('');
      await rowCountBecomes(page, 10);
      await screenshot(page, 'products-1280');
      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      await screenshot(page, 'products-400');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('shows a product: its properties as text, who sent it, its events latest first (a large one loaded on demand), and back to the list', async () => {
    queued(await app.ingest(account, 'products', { productId: 'shirt', userId: 'u-7', properties: { colour: 'red', note: injection, sizes: ['S', 'M'] } }));
    queued(await app.ingest(account, 'productsevents', { productId: 'shirt', userId: 'u-7', eventName: 'viewed', eventTime: '2026-03-01T10:00:00Z', eventData: { from: injection } }));
    const trackID = queued(await app.ingest(account, 'productsevents', { productId: 'shirt', userId: null, eventName: 'carted', eventTime: '2026-03-02T10:00:00Z', eventData: { big: 'b'.repeat(5000) } }));
    await app.projected();
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/products?q=shirt');
      await productLink(page, 'shirt').click();
      await page.getByRole('heading', { name: 'Product shirt' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/products/shirt');

      const properties = page.getByRole('region', { name: 'Properties', exact: true });
      await properties.waitFor();
      const valueOf = (name: string) => properties.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) }).locator('td').textContent();
      expect(await valueOf('colour')).to.equal('red');
      expect(await valueOf('note')).to.equal(injection);
      expect(await valueOf('sizes')).to.equal('["S","M"]');
      expect(await page.locator('dl.facts').getByRole('link', { name: 'u-7', exact: true }).getAttribute('href')).to.equal('/dashboard/leads/u-7');

      const events = page.getByRole('region', { name: 'Product events', exact: true });
      await events.locator('tbody tr').nth(1).waitFor();
      expect(await events.locator('tbody tr td:nth-child(2)').allTextContents()).to.deep.equal(['carted', 'viewed']);
      const viewed = events.locator('tbody tr').filter({ hasText: 'viewed' });
      expect(await viewed.textContent()).to.contain(`{"from":"${injection}"}`);
      const carted = events.locator('tbody tr').filter({ hasText: 'carted' });
      expect(await carted.textContent()).to.match(/Truncated: 5,0\d\d bytes of JSON/);
      expect(await carted.getByRole('link', { name: trackID }).getAttribute('href')).to.equal(`/dashboard/track/${trackID}`);
      await carted.getByRole('button', { name: 'Load the full event data of carted' }).click();
      expect(await carted.locator('pre.json:not(.excerpt)').textContent()).to.contain(`"big": "${'b'.repeat(5000)}"`);
      expect(await page.locator('img').count()).to.equal(0);
      await screenshot(page, 'product-1280');

      await page.getByRole('link', { name: 'Back to products' }).click();
      await page.getByRole('heading', { name: 'Products' }).waitFor();
      expect(new URL(page.url()).search).to.equal('?q=shirt');
      expect(await page.getByLabel('Search products').inputValue()).to.equal('shirt');
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it("shows the events of a productId never sent to /products, and nothing of another account's product", async () => {
    queued(await app.ingest(account, 'productsevents', { productId: 'events-only', userId: null, eventName: 'viewed' }));
    await app.projected();
    const base = `/admin/v1/accounts/${account.licenseCode}/products`;
    const { page, expectNoProblems, close } = await openPage(browser, {
      expectedFailedLoads: [...signInFailedLoads, `${base}/events-only`, `${base}/globex-secret`, `${base}/globex-secret/events`],
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/products/events-only');
      await page.getByText('Nothing was sent to /products for this productId in this account: it has no properties.').waitFor();
      const events = page.getByRole('region', { name: 'Product events', exact: true });
      await events.getByRole('cell', { name: 'viewed', exact: true }).waitFor();

      await page.goto(`${app.baseUrl}/dashboard/products/globex-secret`);
      await page.getByText('Nothing was sent to /products for this productId in this account: it has no properties.').waitFor();
      await page.getByText('None yet: product events sent to /productsevents for this productId show up here.').waitFor();
      expect(await page.getByRole('region', { name: 'Properties', exact: true }).count()).to.equal(0);
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
