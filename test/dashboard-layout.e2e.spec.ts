import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { adminToken, servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { cookieNames, signInAsAccount, signInAsOperator, signInFailedLoads } from './support/dashboard-session.js';

/** The layout around the pages for each kind of session, and signing in and out, against the real service. */
const hostileName = '<img src=x onerror="window.hacked=1">Acme & Co';

/** The elements that reach past the window's right edge, as tag.class ('' for none). */
const widest = `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll-box, pre')).map((e) => e.tagName + '.' + e.className).join(' ')`;

const navLinks = (page: Page) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();

describe('dashboard layout and sign-in (e2e)', () => {
  let app: TestApp;
  let first: Credentials;
  let hostile: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account: first } = started), { scope: 'suite' });
  before(async () => {
    hostile = await app.account(hostileName);
  });
  usesBrowser((launched) => (browser = launched));

  for (const width of [1280, 400]) {
    it(`signs an operator in with the admin token: every section, the account picker and sign out at ${width} px`, async () => {
      const { page, expectNoProblems, close } = await openPage(browser, { width, expectedFailedLoads: signInFailedLoads });
      try {
        await signInAsOperator(page, app.baseUrl);
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        expect(await navLinks(page)).to.deep.equal([
          'Overview',
          'Leads',
          'Products',
          'Live events',
          'Warnings',
          'Track lookup',
          'Credentials',
          'Erasures',
          'Projections',
          'Accounts',
          'API reference',
        ]);
        expect(await page.locator('header .who').textContent()).to.equal('Signed in as Operator');
        const picker = page.getByLabel('Account', { exact: true });
        await picker.locator('option').nth(1).waitFor({ state: 'attached' });
        expect(await picker.inputValue()).to.equal(first.licenseCode);
        // A name an account was given is text, never markup.
        expect(await picker.locator('option').nth(1).textContent()).to.equal(`${hostileName} (${hostile.licenseCode})`);
        await picker.selectOption(hostile.licenseCode);
        await page.getByRole('link', { name: 'Credentials' }).click();
        await page.getByText(hostile.licenseCode, { exact: true }).first().waitFor();
        expect(await page.evaluate('window.hacked')).to.equal(undefined);
        await screenshot(page, `credentials-operator-${width}`);
        expect(await page.evaluate(widest)).to.equal('');
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        expectNoProblems();
      } finally {
        await close();
      }
    });
  }

  it('signs an account owner in and out: after sign-out the cookie is gone and a reload shows the sign-in page', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, hostile, '/dashboard/leads');
      await page.getByRole('heading', { name: 'Leads' }).waitFor();
      expect(await cookieNames(page)).to.include('tracking_session');
      expect(await page.locator('header .who').textContent()).to.equal(`Signed in as ${hostileName}`);
      expect(await page.evaluate('window.hacked')).to.equal(undefined);
      // The session outlives a reload.
      await page.reload();
      await page.getByRole('heading', { name: 'Leads' }).waitFor();

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await cookieNames(page)).not.to.include('tracking_session');
      await page.reload();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      expect(await page.getByRole('heading', { name: 'Leads' }).count()).to.equal(0);
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('shows a wrong token, a wrong admin token and a token of scope ingest refused as text', async () => {
    const loginPath = '/admin/v1/session';
    const { page, expectNoProblems, close } = await openPage(browser, { width: 400, expectedFailedLoads: [loginPath] });
    try {
      await page.goto(`${app.baseUrl}/dashboard`);
      await page.getByLabel('License code').fill(first.licenseCode);
      await page.getByLabel('Access token').fill('not-the-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.getByText('Wrong license code or access token', { exact: true }).waitFor();

      const created = await app.request<{ accessToken: string }>(
        'POST',
        `/admin/v1/accounts/${first.licenseCode}/tokens`,
        { label: 'tracker', scope: 'ingest' },
        { authorization: `Bearer ${adminToken}` },
      );
      expect(created.status).to.equal(201);
      await page.getByLabel('Access token').fill(created.body.accessToken);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await alert.getByText('This access token has scope ingest: signing in needs a token of scope ingest+read', { exact: true }).waitFor();
      await screenshot(page, 'sign-in-ingest-scope-400');

      await page.getByLabel('Operator').check();
      await page.getByLabel('Admin token').fill('not-the-admin-token');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await alert.getByText('Wrong admin token', { exact: true }).waitFor();
      expect(await cookieNames(page)).not.to.include('tracking_session');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('offers an account no operator section; their URLs show a refusal, not data; links change the page without a reload', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, first, '/dashboard/leads');
      await page.getByRole('heading', { name: 'Leads' }).waitFor();
      expect(await navLinks(page)).to.deep.equal(['Overview', 'Leads', 'Products', 'Live events', 'Warnings', 'Track lookup', 'Credentials', 'Erasures', 'API reference']);
      expect(await page.getByRole('link', { name: 'Leads' }).getAttribute('aria-current')).to.equal('page');

      await page.evaluate('window.sameDocument = true');
      await page.getByRole('link', { name: 'Warnings' }).click();
      await page.getByRole('heading', { name: 'Warnings' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/warnings');
      expect(await page.evaluate('window.sameDocument')).to.equal(true);
      // The new page's heading has the focus.
      await page.locator('#page-heading:focus').waitFor({ timeout: 2000 });
      await page.goBack();
      await page.getByRole('heading', { name: 'Leads' }).waitFor();

      for (const path of ['/dashboard/projections', '/dashboard/accounts']) {
        await page.goto(app.baseUrl + path);
        await page.getByRole('heading', { name: 'Operators only' }).waitFor();
        expect(await page.getByRole('alert').textContent()).to.equal("This page is for operators: an account's session cannot open it.");
        expect(await page.getByRole('table').count()).to.equal(0);
        expect(await page.getByText(hostile.licenseCode).count()).to.equal(0);
      }
      await screenshot(page, 'layout-account-1280');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('reaches sign out and every section with the keyboard', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { width: 400, expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, first);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      // The heading has the focus as soon as the page is shown, not a frame later: a Tab pressed
      // in between was undone when the focus was pulled back to the heading (the walk then met
      // "Skip to content" twice).
      expect(await page.evaluate('document.activeElement?.id')).to.equal('page-heading');
      // Where a Tab goes from the heading depends on what the Overview holds (its tables take the
      // focus), so the walk starts at the top of the page.
      await page.locator('a.skip').focus();
      const active = async (): Promise<string> => String(await page.evaluate('document.activeElement.textContent')).trim();
      const reached: string[] = [await active()];
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press('Tab');
        reached.push(await active());
      }
      expect(reached).to.deep.equal([
        'Skip to content',
        'Sign out',
        'Overview',
        'Leads',
        'Products',
        'Live events',
        'Warnings',
        'Track lookup',
        'Credentials',
      ]);
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Credentials' }).waitFor();
      await screenshot(page, 'layout-keyboard-400');
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
