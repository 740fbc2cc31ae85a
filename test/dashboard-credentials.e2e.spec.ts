import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { adminToken, servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInAsOperator, signInFailedLoads } from './support/dashboard-session.js';
import { queued, requestError } from './support/replies.js';

/** The Credentials and Accounts pages of the dashboard, against the real service. */
const event = { userId: 'u-1', eventName: 'Viewed', eventData: {} };
const admin = `Bearer ${adminToken}`;

/** Creates a token in the Credentials page's form and returns the token it shows once. */
async function createTokenInPage(page: Page, label: string, scope: string): Promise<string> {
  await page.getByLabel('Label', { exact: true }).fill(label);
  await page.getByLabel('Scope', { exact: true }).selectOption(scope);
  await page.getByRole('button', { name: 'Create token' }).click();
  const shown = page.getByRole('region', { name: 'New access token' });
  await shown.getByText(`Label ${label}, scope ${scope}.`).waitFor();
  expect(await shown.getByText('It will not be shown again', { exact: false }).isVisible()).to.equal(true);
  return (await shown.locator('code.secret').textContent()) as string;
}

/** The row of a token by its label (by text: in a narrow window the cell's name also carries its column's). */
const tokenRow = (page: Page, label: string) => page.getByRole('row').filter({ has: page.locator('td[data-label="Label"]').getByText(label, { exact: true }) });

describe('dashboard credentials and accounts (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite' });
  usesBrowser((launched) => (browser = launched));

  it('creates tokens shown once, posts with one until it is revoked in the page, refuses to read with scope ingest and to revoke the last token', async () => {
    const tokens = await app.get<{ tokens: { id: string }[] }>(`/admin/v1/accounts/${account.licenseCode}/tokens`, admin);
    const initialId = tokens.body.tokens[0]?.id as string;
    const refusedRevoke = `/admin/v1/accounts/${account.licenseCode}/tokens/${initialId}`;
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: [...signInFailedLoads, refusedRevoke] });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/credentials');
      await page.getByRole('heading', { name: 'Credentials' }).waitFor();
      expect(await page.locator('dl.facts').textContent()).to.contain(`${app.baseUrl}/v1/accounts/${account.licenseCode}`);
      const examples = await page.locator('figure.example pre').allTextContents();
      expect(examples).to.have.length(2);
      expect(examples[0]).to.contain(`curl -s -X POST '${app.baseUrl}/v1/accounts/${account.licenseCode}/users'`);
      expect(examples[1]).to.contain(`'${app.baseUrl}/v1/accounts/${account.licenseCode}/events'`);
      await tokenRow(page, 'initial').waitFor();

      const webShop = await createTokenInPage(page, 'web shop', 'ingest+read');
      expect(webShop).to.match(/^trk_/);
      // The focus is on the new token's Copy button, and the examples carry the token, ready to run.
      expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).to.equal('Copy access token');
      const withToken = await page.locator('figure.example pre').allTextContents();
      expect(withToken[0]).to.contain(`Bearer ${webShop}`).and.contain('"userId":"example-user-from-dashboard"');
      const { stdout } = await promisify(execFile)('sh', ['-c', withToken[0] as string]);
      expect(JSON.parse(stdout)).to.deep.include({ response: { status: 'queued', trackID: (JSON.parse(stdout) as { response: { trackID: string } }).response.trackID } });
      await page.getByRole('button', { name: 'Done, hide it' }).click();
      await page.locator('figure.example pre').first().filter({ hasText: 'Bearer <ACCESS_TOKEN>' }).waitFor();
      const withWebShop = { ...account, accessToken: webShop };
      queued(await app.ingest(withWebShop, 'events', event));
      await tokenRow(page, 'web shop').waitFor();
      await screenshot(page, 'credentials-1280');
      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      // Each token's last use and its Revoke button within the screen's width, not scrolled off.
      for (const shown of [tokenRow(page, 'web shop').locator('td[data-label="Last used"]'), page.getByRole('button', { name: 'Revoke token web shop' })]) {
        const box = await shown.boundingBox();
        expect(box && box.x + box.width, 'right edge').to.be.at.most(400);
      }
      await screenshot(page, 'credentials-400');
      await page.setViewportSize({ width: 1280, height: 800 });

      const tracker = await createTokenInPage(page, 'tracker', 'ingest');
      queued(await app.ingest({ ...account, accessToken: tracker }, 'events', event));
      requestError(await app.get(`/admin/v1/accounts/${account.licenseCode}/leads`, `Bearer ${tracker}`), 403);
      await tokenRow(page, 'tracker').waitFor();
      expect(await tokenRow(page, 'tracker').getByRole('cell').nth(1).textContent()).to.equal('ingest');

      // Shown once: after a reload, neither token is anywhere in the page.
      await page.reload();
      await tokenRow(page, 'web shop').waitFor();
      const html = await page.content();
      expect(html).not.to.contain(webShop);
      expect(html).not.to.contain(tracker);

      await page.getByRole('button', { name: 'Revoke token web shop' }).click();
      // A confirmation of its own, not window.confirm; Cancel keeps the token.
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: 'Revoke token web shop' }).click();
      await page.getByRole('button', { name: 'Yes, revoke it' }).click();
      await tokenRow(page, 'web shop').waitFor({ state: 'detached' });
      // The row and its buttons are gone: the focus is on the list, not lost to the page.
      await page.getByRole('region', { name: 'Access tokens table' }).and(page.locator(':focus')).waitFor();
      requestError(await app.ingest(withWebShop, 'events', event), 401);

      await page.getByRole('button', { name: 'Revoke token tracker' }).click();
      await page.getByRole('button', { name: 'Yes, revoke it' }).click();
      await tokenRow(page, 'tracker').waitFor({ state: 'detached' });
      await page.getByRole('button', { name: 'Revoke token initial' }).click();
      await page.getByRole('button', { name: 'Yes, revoke it' }).click();
      await page.getByRole('alert').getByText("this is the account's last active access token: create another before revoking it").waitFor();
      expect(await tokenRow(page, 'initial').count()).to.equal(1);
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it("lets an operator see a picked account's credentials, create an account, and then sign in as it with what was shown once", async () => {
    const globex = await app.account('Globex');
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsOperator(page, app.baseUrl, '/dashboard/credentials', globex.licenseCode);
      await page.locator('dl.facts').getByText(globex.licenseCode, { exact: true }).waitFor();
      await tokenRow(page, 'initial').waitFor();

      await page.getByRole('link', { name: 'Accounts' }).click();
      await page.getByRole('heading', { name: 'Accounts' }).waitFor();
      await page.getByRole('row').filter({ hasText: 'Globex' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Initech <b>');
      await page.getByRole('button', { name: 'Create account' }).click();
      const shown = page.getByRole('region', { name: 'New account' });
      await shown.waitFor();
      const licenseCode = (await shown.locator('p code').first().textContent()) as string;
      const accessToken = (await shown.locator('code.secret').textContent()) as string;
      expect(await shown.textContent()).to.contain('Account Initech <b>, license code');
      await page.getByRole('row').filter({ hasText: licenseCode }).getByRole('cell', { name: 'Initech <b>', exact: true }).waitFor();
      // The account picker offers it at once, without a reload.
      await page.getByLabel('Account', { exact: true }).locator('option', { hasText: licenseCode }).waitFor({ state: 'attached' });
      await screenshot(page, 'accounts-1280');
      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      await screenshot(page, 'accounts-400');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in' }).waitFor();
      await signInAsAccount(page, app.baseUrl, { licenseCode, accessToken }, '/dashboard/credentials');
      expect(await page.locator('header .who').textContent()).to.equal('Signed in as Initech <b>');
      await page.locator('dl.facts').getByText(licenseCode, { exact: true }).waitFor();
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
