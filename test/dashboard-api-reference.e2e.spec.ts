import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';

/** The dashboard's API reference page: the served OpenAPI document as text, open without signing in. */

/** The elements that reach past the window's right edge, as tag.class ('' for none). */
const widest = `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll-box, pre')).map((e) => e.tagName + '.' + e.className).join(' ')`;

describe('dashboard API reference (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  let operationCount: number;
  servedApp((started) => ({ app, account } = started), { scope: 'suite' });
  usesBrowser((launched) => (browser = launched));
  before(async () => {
    const document = (await app.get<{ paths: Record<string, Record<string, unknown>> }>('/openapi.json')).body;
    operationCount = Object.values(document.paths).reduce((total, item) => total + Object.keys(item).length, 0);
  });

  for (const width of [1280, 400]) {
    it(`shows every operation of /openapi.json to someone not signed in, as text within the CSP, at ${width} px`, async () => {
      const { page, expectNoProblems, close } = await openPage(browser, { width, expectedFailedLoads: signInFailedLoads });
      try {
        await page.goto(`${app.baseUrl}/dashboard/api`);
        await page.getByRole('heading', { name: 'API reference' }).waitFor();
        const users = page.getByRole('article', { name: 'POST /v1/accounts/{license}/users', exact: true });
        await users.waitFor();
        expect(await page.getByRole('button', { name: 'Sign in' }).count()).to.equal(0);
        expect(await page.locator('article.operation').count()).to.equal(operationCount);
        expect(await page.title()).to.equal('API reference · Tracking dashboard');

        // An operation: credentials, headers among its parameters, the body's schema, replies with their headers.
        expect(await users.locator('dd').first().textContent()).to.equal(
          'an access token of the account, or a browser key of the account, from a page of its origins, or a browser key in the query parameter key',
        );
        expect(await users.locator('td code', { hasText: 'Idempotency-Key' }).count()).to.equal(1);
        expect(await users.locator('td code', { hasText: 'Content-Encoding' }).count()).to.equal(1);
        const replies = users.getByRole('region', { name: 'POST /v1/accounts/{license}/users replies table' });
        const tooMany = replies.getByRole('row').filter({ hasText: /^429/ });
        expect(await tooMany.textContent()).to.contain('Retry-After');
        await users.getByText('Example: user profile: known').click();
        expect(JSON.parse((await users.locator('pre').first().textContent()) ?? '')).to.include({ userId: 'u-42' });

        // The schemas of schemas/, their fields as text; links from the operations lead to them.
        const event = page.getByRole('article', { name: 'Schema Event', exact: true });
        expect(await event.locator('li > code').allTextContents()).to.include.members(['userId', 'anonymousId', 'eventName', 'eventTime', 'eventData']);
        await users.getByRole('link', { name: 'User', exact: true }).first().click();
        await page.waitForFunction('location.hash === "#schema-User"');
        expect(await page.getByRole('article', { name: 'Schema User', exact: true }).locator('li > code').allTextContents()).to.include('attributes');

        // Nothing inline, which the CSP would refuse: no script or style element, no style attribute.
        expect(await page.locator('.api-reference script, .api-reference style, .api-reference [style]').count()).to.equal(0);
        await screenshot(page, `api-reference-${width}`, { viewport: true });
        expect(await page.evaluate(widest)).to.equal('');
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        expectNoProblems();
      } finally {
        await close();
      }
    });
  }

  it('is linked from the sign-in page, which its Sign in link leads back to', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await page.goto(`${app.baseUrl}/dashboard`);
      await page.getByRole('link', { name: 'API reference' }).click();
      await page.getByRole('heading', { name: 'API reference' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/api');
      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('is in the navigation of a signed-in account owner', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account);
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'API reference' }).click();
      await page.getByRole('heading', { name: 'API reference' }).waitFor();
      await page.getByRole('article', { name: 'GET /admin/v1/accounts/{license}/leads', exact: true }).waitFor();
      expect(await page.getByRole('button', { name: 'Sign out' }).count()).to.equal(1);
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
