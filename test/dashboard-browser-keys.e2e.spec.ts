import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { adminToken, servedApp, type Credentials, type Reply, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { eventually, until } from './support/eventually.js';
import { queued, requestError } from './support/replies.js';
import { usesSecondOrigin, type SecondOrigin } from './support/second-origin.js';

/**
 * The Browser keys section of the Credentials page (docs/browser.md), against the real service: a
 * key made in the page, its snippet run by a page of another origin, its refusals in Warnings,
 * what it sent in Live events, its origins changed and the key revoked.
 */

const admin = `Bearer ${adminToken}`;
/** The key's label: markup a page must show as text. */
const label = 'shop <img src=x onerror=alert(1)>';
const posted = { anonymousId: 'visitor-from-test', eventName: 'posted_with_key', eventData: { note: '<b>not bold</b>' } };

interface SdkManifest {
  version: string;
  files: { name: string; path: string; bytes: number; gzipBytes: number; integrity: string }[];
}

interface LiveItem {
  name: string | null;
  anonymousId: string | null;
}

describe('dashboard browser keys (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  let site: SecondOrigin;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  usesSecondOrigin((started) => (site = started));

  const keysPath = (): string => `/admin/v1/accounts/${account.licenseCode}/browser-keys`;
  /** A POST as a page sends it: the key in the query string, a text/plain body, an Origin. */
  const fromOrigin = (key: string, origin: string): Promise<Reply> =>
    app.request('POST', `/v1/accounts/${account.licenseCode}/events?key=${encodeURIComponent(key)}`, undefined, {
      raw: JSON.stringify(posted),
      headers: { 'content-type': 'text/plain;charset=UTF-8', origin },
    });
  const liveItems = async (): Promise<LiveItem[]> =>
    (await app.get<{ items: LiveItem[] }>(`/admin/v1/accounts/${account.licenseCode}/live?limit=200`, admin)).body.items;
  const named = (items: LiveItem[], name: string): number => items.filter((item) => item.name === name).length;
  /** The row of the key, by its label cell's text (in a narrow window a cell's name also carries its column's). */
  const keyRow = (page: Page) => page.getByRole('row').filter({ has: page.locator('td[data-label="Label"]').getByText(label, { exact: true }) });
  const originsOfRow = (page: Page) => keyRow(page).locator('ul.origins li').allTextContents();

  /** Serves `snippet` in a page of the second origin, opens it, and waits for its page view to be stored. */
  async function runInPage(page: Page, snippet: string, title: string, pageViewsBefore: number): Promise<void> {
    const shop = await page.context().newPage();
    const problems: string[] = [];
    shop.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    shop.on('pageerror', (error) => problems.push(error.message));
    try {
      await shop.goto(site.page(`<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>\n${snippet}\n</body></html>`));
      await eventually(async () => named(await liveItems(), 'page_view') > pageViewsBefore, 15_000, () => `no page view of ${title} stored; the page reported ${JSON.stringify(problems)}`);
      expect(problems, title).to.deep.equal([]);
    } finally {
      await shop.close();
    }
  }

  it('makes a key with two origins, shows it once with a snippet a page runs, counts its refusals in Warnings, edits its origins and revokes it', async function () {
    this.timeout(90_000);
    const manifest = await app.get<SdkManifest>('/sdk/manifest.json');
    expect(manifest.status, JSON.stringify(manifest.body)).to.equal(200);
    const scriptFile = manifest.body.files.find((file) => file.name === 'tracking.js');
    const moduleFile = manifest.body.files.find((file) => file.name === 'tracking.mjs');
    if (!scriptFile || !moduleFile) throw new Error(`the manifest lacks a file: ${JSON.stringify(manifest.body)}`);
    // The refusals of the forms below are expected: their keys' paths are added as they are known.
    const expectedFailedLoads = [...signInFailedLoads, keysPath()];
    const { page, context, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.baseUrl });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/credentials');
      const section = page.getByRole('region', { name: 'Browser keys', exact: true });
      await section.getByText('No browser key yet', { exact: false }).waitFor();
      // The SDK's facts: the integrity and gzipped size of each file, as the manifest says.
      const facts = section.getByRole('region', { name: 'Browser SDK' });
      await facts.getByText(scriptFile.integrity, { exact: true }).waitFor();
      expect(await facts.textContent()).to.contain(`gzipped (${scriptFile.gzipBytes.toLocaleString('en-US')} bytes; ${scriptFile.bytes.toLocaleString('en-US')} bytes as served)`);

      // The server's refusal is shown in the form, which keeps what was typed.
      const form = section.locator('form.browser-key-form');
      await page.getByLabel('Key label', { exact: true }).fill(label);
      await page.getByLabel('Allowed origins', { exact: true }).fill(`${site.origin}/shop\nhttps://*.example.com`);
      await page.getByRole('button', { name: 'Make browser key' }).click();
      await form.getByRole('alert').getByText('no path, query or user', { exact: false }).waitFor();
      expect(await page.getByLabel('Key label', { exact: true }).inputValue()).to.equal(label);

      await page.getByLabel('Allowed origins', { exact: true }).fill(`  ${site.origin}\n\nhttps://*.example.com  \n`);
      await page.getByRole('button', { name: 'Make browser key' }).click();
      const shown = page.getByRole('region', { name: 'New browser key' });
      await shown.getByText(`Label ${label}, origins ${site.origin}, https://*.example.com.`).waitFor();
      await form.getByRole('alert').waitFor({ state: 'detached' });
      const browserKey = (await shown.locator('code.secret').textContent()) as string;
      expect(browserKey).to.match(/^tbk_/);
      expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).to.equal('Copy browser key');
      await keyRow(page).waitFor();
      expect(await originsOfRow(page)).to.deep.equal([site.origin, 'https://*.example.com']);
      expect(await keyRow(page).locator('td[data-label="Last used"]').textContent()).to.equal('never');
      // The label is text wherever it is shown: no image, nothing ran.
      expect(await page.locator('img').count()).to.equal(0);

      // The snippets, copied: the pinned files with the manifest's integrity, and the key.
      const copied = async (name: string): Promise<string> => {
        const figure = shown.locator('figure.snippet').filter({ has: page.getByRole('button', { name: `Copy the ${name} snippet` }) });
        await figure.getByRole('button').click();
        await figure.getByText('Copied.').waitFor();
        const text = (await page.evaluate('navigator.clipboard.readText()')) as string;
        expect(await figure.locator('pre').textContent()).to.equal(text);
        return text;
      };
      const scriptSnippet = await copied('script tag');
      expect(scriptSnippet).to.contain(`<script src="${app.baseUrl}${scriptFile.path}" integrity="${scriptFile.integrity}" crossorigin="anonymous"></script>`);
      for (const part of [`baseUrl: "${app.baseUrl}"`, `licenseCode: "${account.licenseCode}"`, `browserKey: "${browserKey}"`, 'Tracking.createTracker(', 'tracker.page();']) {
        expect(scriptSnippet).to.contain(part);
      }
      const moduleSnippet = await copied('ES module');
      expect(moduleSnippet).to.contain(`"${app.baseUrl}${moduleFile.path}": "${moduleFile.integrity}"`);
      expect(moduleSnippet).to.contain(`browserKey: "${browserKey}"`);
      await screenshot(page, 'browser-keys-1280');
      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      for (const control of [page.getByRole('button', { name: `Revoke browser key ${label}` }), page.getByRole('button', { name: 'Copy the script tag snippet' })]) {
        const box = await control.boundingBox();
        expect(box && box.x + box.width, 'right edge').to.be.at.most(400);
      }
      await screenshot(page, 'browser-keys-400');
      await page.setViewportSize({ width: 1280, height: 800 });

      // Both snippets work as they are, in a page of an allowed origin (the browser checks the integrity).
      await runInPage(page, scriptSnippet, 'Shop with a script tag', 0);
      await runInPage(page, moduleSnippet, 'Shop with a module', 1);

      // The key from an allowed origin (a wildcard's subdomain); another origin is refused and counted.
      queued(await fromOrigin(browserKey, 'https://a.example.com'));
      expect(requestError(await fromOrigin(browserKey, 'https://evil.example'), 403)).to.equal('origin https://evil.example is not allowed for this browser key');
      await eventually(
        async () => (await app.get<{ warnings: { reason: string }[] }>(`/admin/v1/accounts/${account.licenseCode}/warnings/recent`, admin)).body.warnings.length > 0,
        5_000,
        () => 'the refusal not in Warnings',
      );
      await page.getByRole('link', { name: 'Warnings', exact: true }).click();
      const refusal = page.getByRole('article', { name: 'Refused: origin_not_allowed, the request as a whole, events' });
      await refusal.waitFor();
      expect(await refusal.locator('.reason-help').textContent()).to.contain('Origin not allowed.');
      expect(await refusal.locator('dd.message').textContent()).to.equal('origin https://evil.example is not allowed for this browser key');
      expect(await refusal.locator('dd').nth(1).textContent()).to.equal('403');
      await refusal.getByText('No body.').waitFor();
      const recent = page.getByRole('region', { name: 'Latest refused items' }).locator('tbody tr');
      expect(await recent.locator('td[data-label="Reason"]').textContent()).to.equal('origin_not_allowed origin not allowed');
      expect(await recent.locator('td[data-label="Body"]').textContent()).to.equal('none');
      await screenshot(page, 'browser-keys-warnings-1280');

      // What the pages and the test sent is in Live events, as any item.
      await page.getByRole('link', { name: 'Live events', exact: true }).click();
      const live = page.getByRole('region', { name: 'Latest items' });
      await live.getByRole('row').filter({ hasText: 'posted_with_key' }).filter({ hasText: posted.anonymousId }).waitFor();
      expect(await live.getByRole('row').filter({ hasText: 'page_view' }).count()).to.equal(2);

      // Its origins changed: a refusal of the server shown in the form, then saved.
      await page.getByRole('link', { name: 'Credentials', exact: true }).click();
      await keyRow(page).waitFor();
      const keyId = (await app.get<{ browserKeys: { id: string }[] }>(keysPath(), admin)).body.browserKeys[0]?.id as string;
      expectedFailedLoads.push(`${keysPath()}/${keyId}`);
      await page.getByRole('button', { name: `Edit origins of browser key ${label}` }).click();
      const box = page.getByLabel(`Allowed origins of ${label}`, { exact: true });
      await box.and(page.locator(':focus')).waitFor();
      expect(await box.inputValue()).to.equal(`${site.origin}\nhttps://*.example.com`);
      const editForm = page.getByRole('form', { name: `Edit the origins of ${label}` });
      await box.fill('https://*.com');
      await editForm.getByRole('button', { name: 'Save origins' }).click();
      await editForm.getByRole('alert').getByText('a wildcard must stand before a host of at least two labels', { exact: false }).waitFor();
      await box.fill(`${site.origin}\nhttps://shop.example.com`);
      await editForm.getByRole('button', { name: 'Save origins' }).click();
      await editForm.waitFor({ state: 'detached' });
      expect(await originsOfRow(page)).to.deep.equal([site.origin, 'https://shop.example.com']);
      await page.getByRole('button', { name: `Edit origins of browser key ${label}` }).and(page.locator(':focus')).waitFor();
      requestError(await fromOrigin(browserKey, 'https://a.example.com'), 403);
      queued(await fromOrigin(browserKey, 'https://shop.example.com'));

      // Used: its last use is shown after a reload (the key itself never again).
      await page.reload();
      await keyRow(page).waitFor();
      expect(await keyRow(page).locator('td[data-label="Last used"]').textContent()).to.match(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
      expect(await page.content()).not.to.contain(browserKey);

      // Revoked after a confirmation; Cancel keeps it.
      await page.getByRole('button', { name: `Revoke browser key ${label}` }).click();
      await page.getByRole('button', { name: 'Cancel' }).click();
      await page.getByRole('button', { name: `Revoke browser key ${label}` }).click();
      await page.getByRole('button', { name: 'Yes, revoke it' }).click();
      await keyRow(page).waitFor({ state: 'detached' });
      await section.getByText('No browser key yet', { exact: false }).waitFor();
      await page.getByRole('heading', { name: 'Browser keys' }).and(page.locator(':focus')).waitFor();
      await until(async () => (await fromOrigin(browserKey, 'https://shop.example.com')).status === 401, 5_000, () => 'the revoked key still accepted');

      expect(await page.locator('img').count()).to.equal(0);
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
