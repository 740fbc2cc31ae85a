import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { servedApp, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';

/**
 * The layout around the pages, for each kind of session. The session calls of docs/api.md are not
 * served by this branch yet: the browser is given their documented answers (page.route) until they
 * are, and then these tests sign in for real.
 */
const hostileName = '<img src=x onerror="window.hacked=1">Acme & Co';

async function answerSession(page: Page, session: unknown, accounts: unknown[] = []): Promise<void> {
  await page.route('**/admin/v1/session', (route) => route.fulfill({ json: session }));
  await page.route('**/admin/v1/accounts', (route) => route.fulfill({ json: { accounts } }));
}

const navLinks = (page: Page) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();

describe('dashboard layout (e2e)', () => {
  let app: TestApp;
  let browser: Browser;
  servedApp((started) => ({ app } = started), { scope: 'suite' });
  usesBrowser((launched) => (browser = launched));

  for (const width of [1280, 400]) {
    it(`shows an operator every section, the account picker and sign out at ${width} px`, async () => {
      const { page, expectNoProblems, close } = await openPage(browser, { width });
      try {
        await answerSession(page, { kind: 'operator' }, [
          { licenseCode: 'lic-1', name: hostileName, createdAt: '2026-01-01T00:00:00.000Z' },
          { licenseCode: 'lic-2', name: 'Globex', createdAt: '2026-01-02T00:00:00.000Z' },
        ]);
        await page.goto(`${app.baseUrl}/dashboard`);
        await page.getByRole('heading', { name: 'Overview' }).waitFor();
        expect(await navLinks(page)).to.deep.equal([
          'Overview',
          'Leads',
          'Live events',
          'Warnings',
          'Track lookup',
          'Credentials',
          'Projections',
          'Accounts',
        ]);
        expect(await page.locator('header .who').textContent()).to.equal('Signed in as Operator');
        const picker = page.getByLabel('Account');
        expect(await picker.inputValue()).to.equal('lic-1');
        // A name an account was given is text, never markup.
        expect(await picker.locator('option').first().textContent()).to.equal(`${hostileName} (lic-1)`);
        expect(await page.evaluate('window.hacked')).to.equal(undefined);
        expect(await page.getByRole('button', { name: 'Sign out' }).isVisible()).to.equal(true);
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        await screenshot(page, `layout-operator-${width}`);
        expectNoProblems();
      } finally {
        await close();
      }
    });
  }

  it('shows an account owner its name and no operator sections; links change the page without a reload', async () => {
    const { page, expectNoProblems, close } = await openPage(browser);
    try {
      await answerSession(page, { kind: 'account', account: { licenseCode: 'lic-1', name: hostileName } });
      await page.goto(`${app.baseUrl}/dashboard/leads`);
      await page.getByRole('heading', { name: 'Leads' }).waitFor();
      expect(await navLinks(page)).to.deep.equal(['Overview', 'Leads', 'Live events', 'Warnings', 'Track lookup', 'Credentials']);
      expect(await page.locator('header .who').textContent()).to.equal(`Signed in as ${hostileName}`);
      expect(await page.getByRole('link', { name: 'Leads' }).getAttribute('aria-current')).to.equal('page');

      await page.evaluate('window.sameDocument = true');
      await page.getByRole('link', { name: 'Warnings' }).click();
      await page.getByRole('heading', { name: 'Warnings' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/warnings');
      expect(await page.evaluate('window.sameDocument')).to.equal(true);
      // The new page's heading has the focus.
      expect(await page.evaluate('document.activeElement.id')).to.equal('page-heading');

      await page.goBack();
      await page.getByRole('heading', { name: 'Leads' }).waitFor();
      await page.goto(`${app.baseUrl}/dashboard/projections`);
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
      await screenshot(page, 'layout-account-1280');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('reaches sign out and every section with the keyboard', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { width: 400 });
    try {
      await answerSession(page, { kind: 'account', account: { licenseCode: 'lic-1', name: 'Acme' } });
      await page.goto(`${app.baseUrl}/dashboard`);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      const reached: string[] = [];
      for (let i = 0; i < 8; i++) {
        await page.keyboard.press('Tab');
        reached.push(String(await page.evaluate('document.activeElement.textContent')).trim());
      }
      expect(reached).to.deep.equal([
        'Skip to content',
        'Sign out',
        'Overview',
        'Leads',
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
