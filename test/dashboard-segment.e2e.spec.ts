import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { projectRoot } from '../src/paths.js';
import { adminToken, servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { itemError } from './support/replies.js';

/**
 * What the dashboard shows of Segment's tracking API (docs/segment.md), against the real service:
 * the Credentials page's section for Segment's and RudderStack's libraries (the host, the write
 * keys, two snippets, the address setting saved through the settings API), the library of a
 * refused message in Warnings, and Segment's endpoints in the Overview.
 */

interface Lead {
  email: string | null;
  attributes: Record<string, unknown>;
}

describe('dashboard: Segment-compatible libraries (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));

  const bearer = (): string => `Bearer ${account.accessToken}`;
  const settingsPath = (): string => `/admin/v1/accounts/${account.licenseCode}/settings`;

  it('shows the host and write keys with snippets for the service, the analytics-node one runs as it is once given a token, and saves "Visitor addresses"', async function () {
    this.timeout(90_000);
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: [...signInFailedLoads, settingsPath()] });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/credentials');
      const section = page.getByRole('region', { name: 'Segment-compatible libraries', exact: true });
      await section.getByRole('heading', { name: 'Already using Segment or RudderStack?', exact: true }).waitFor();
      expect(await section.locator('dl.segment-facts code').textContent()).to.equal(app.baseUrl);
      const facts = (await section.locator('dl.segment-facts').textContent()) as string;
      expect(facts).to.contain('An access token of scope ingest').and.contain('A browser key');

      const node = (await section.locator('figure.snippet').filter({ has: page.getByRole('button', { name: 'Copy the analytics-node snippet' }) }).locator('pre').textContent()) as string;
      const next = (await section.locator('figure.snippet').filter({ has: page.getByRole('button', { name: 'Copy the analytics-next snippet' }) }).locator('pre').textContent()) as string;
      expect(node).to.contain(`new Analytics({ writeKey: '<ACCESS_TOKEN>', host: '${app.baseUrl}' })`);
      const { host, protocol } = new URL(app.baseUrl);
      expect(next).to.contain('AnalyticsBrowser.load(');
      expect(next).to.contain(`{ writeKey: '<BROWSER_KEY>', cdnURL: '${app.baseUrl}' }`);
      expect(next).to.contain(`{ integrations: { 'Segment.io': { apiHost: '${host}/v1', protocol: '${protocol.replace(':', '')}' } } }`);
      // Placeholders only: no token of the account is in the page.
      expect(await page.content()).not.to.contain(account.accessToken);

      // The analytics-node snippet, as a server runs it, with a token of scope ingest in place of the placeholder.
      const made = await app.request<{ accessToken: string }>('POST', `/admin/v1/accounts/${account.licenseCode}/tokens`, { label: 'server', scope: 'ingest' }, { authorization: bearer() });
      expect(made.status).to.equal(201);
      const artifacts = join(projectRoot, 'test-artifacts');
      mkdirSync(artifacts, { recursive: true });
      // Under the project, so that the script finds @segment/analytics-node in its node_modules.
      const folder = mkdtempSync(join(artifacts, 'segment-snippet-'));
      try {
        const script = join(folder, 'server.mjs');
        writeFileSync(script, node.replace('<ACCESS_TOKEN>', made.body.accessToken));
        await promisify(execFile)(process.execPath, [script], { timeout: 30_000 });
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
      await app.projected();
      const lead = await app.get<Lead>(`/admin/v1/accounts/${account.licenseCode}/leads/user-42`, bearer());
      expect(lead.status, JSON.stringify(lead.body)).to.equal(200);
      expect(lead.body.email).to.equal('ann@example.com');

      // Visitor addresses: truncate to begin with, keep once chosen, saved at once and shown again after a reload.
      const select = page.getByLabel('Visitor addresses', { exact: true });
      expect(await select.inputValue()).to.equal('truncate');
      expect(await select.locator('option').allTextContents()).to.deep.equal(['keep: the whole address', 'truncate: its network part only (default)', 'drop: no address']);
      await select.selectOption('keep');
      await section.getByRole('status').filter({ hasText: 'Saved: addresses are kept whole.' }).waitFor();
      expect((await app.get<{ addressPolicy: string }>(settingsPath(), bearer())).body).to.deep.equal({ addressPolicy: 'keep' });
      await screenshot(page, 'segment-libraries-1280');
      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      await screenshot(page, 'segment-libraries-400');
      await page.setViewportSize({ width: 1280, height: 800 });

      await page.reload();
      await page.getByLabel('Visitor addresses', { exact: true }).waitFor();
      expect(await page.getByLabel('Visitor addresses', { exact: true }).inputValue()).to.equal('keep');

      // A change the API refuses (credentials that may read but not change): the error shown, the
      // setting as it was, the control read-only.
      await page.route(`**${settingsPath()}`, (route) =>
        route.request().method() === 'PATCH'
          ? route.fulfill({ status: 403, contentType: 'application/json', body: JSON.stringify({ error: 'these credentials may not change the settings', code: 403 }) })
          : route.continue(),
      );
      await page.getByLabel('Visitor addresses', { exact: true }).selectOption('drop');
      await section.getByRole('alert').getByText('these credentials may not change the settings').waitFor();
      expect(await page.getByLabel('Visitor addresses', { exact: true }).inputValue()).to.equal('keep');
      expect(await page.getByLabel('Visitor addresses', { exact: true }).isDisabled()).to.equal(true);
      await section.getByText('Read-only: these credentials may not change the account\'s settings.').waitFor();
      await page.unroute(`**${settingsPath()}`);
      expect((await app.get<{ addressPolicy: string }>(settingsPath(), `Bearer ${adminToken}`)).body).to.deep.equal({ addressPolicy: 'keep' });
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('shows the library of a refused Segment message in Warnings, and names Segment\'s endpoints in the Overview', async function () {
    this.timeout(60_000);
    const basic = `Basic ${Buffer.from(`${account.accessToken}:`).toString('base64')}`;
    // A track without its event: refused, its library kept with the refusal.
    const refused = await app.request('POST', '/v1/track', { userId: 'u', context: { library: { name: 'analytics-ruby', version: '2.4.0' } } }, { authorization: basic });
    expect(itemError(refused)).to.equal('event is required');
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/warnings');
      await page.getByRole('heading', { name: 'Ingestion warnings' }).waitFor();
      // The refusal is recorded within seconds; the page refreshes every 10.
      const group = page.getByRole('article').filter({ hasText: 'analytics-ruby 2.4.0' });
      await group.waitFor({ timeout: 30_000 });
      expect(await group.locator('h3').textContent()).to.contain('segment');
      const sentBy = group.locator('dt', { hasText: 'Sent by' });
      expect(await sentBy.count()).to.equal(1);
      expect(await group.locator('dd.client').textContent()).to.equal('analytics-ruby 2.4.0');
      const row = page.getByRole('region', { name: 'Latest refused items' }).locator('tbody tr').filter({ hasText: 'analytics-ruby' });
      expect(await row.locator('td[data-label="Endpoint"]').textContent()).to.equal('segment sent by analytics-ruby 2.4.0');
      expect(await row.locator('td[data-label="Endpoint"] .client').textContent()).to.equal(' sent by analytics-ruby 2.4.0');
      await screenshot(page, 'segment-warnings-1280');

      await page.getByRole('link', { name: 'Overview', exact: true }).click();
      const totals = page.getByRole('region', { name: 'Last hour, per minute: totals by endpoint' });
      await totals.getByRole('rowheader', { name: 'Segment calls', exact: true }).waitFor({ timeout: 30_000 });
      // The first test's analytics-node snippet posted a batch.
      await totals.getByRole('rowheader', { name: 'Segment batches', exact: true }).waitFor();
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
