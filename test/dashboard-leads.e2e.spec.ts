import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { systemAttributes } from '../src/spec/system-attributes.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { until } from './support/eventually.js';
import { bulkResults, queued } from './support/replies.js';

/** Leads and the lead page of the dashboard, fed through the real ingest API and projections. */
const injection = '<img src=x onerror=alert(1)>';

const leadRows = (page: Page) => page.locator('table.data tbody tr');
/** Waits until the leads table has `count` rows (it refreshes itself and follows the filters). */
async function rowCountBecomes(page: Page, count: number): Promise<void> {
  let rows = 0;
  await until(async () => (rows = await leadRows(page).count()) === count, 5_000, () => `the leads table has ${rows} rows, not ${count}`);
}
const leadLink = (page: Page, id: string) => page.getByRole('link', { name: id, exact: true });
/** The ids of the leads listed, top to bottom. */
const listedIds = (page: Page) => page.locator('table.data tbody tr td:first-child a').allTextContents();

describe('dashboard leads (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  before(async () => {
    other = await app.account('Globex');
  });
  usesBrowser((launched) => (browser = launched));

  it('shows a profile posted through the ingest API within 2 s of its projection while Leads is open, an anonymous one marked as such in text', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads');
      await page.getByText('No leads yet', { exact: false }).waitFor();

      // Listed within 2 s of its projection (the page refreshes every second). The 2 s count from
      // the projection, which the worker does in its own time: counted from the post, a loaded
      // machine's worker used them up.
      queued(await app.ingest(account, 'users', { userId: 'u-live', firstName: 'Lia', lastName: 'Live', email: 'lia@example.com', attributes: {} }));
      await app.projected();
      await leadLink(page, 'u-live').waitFor({ timeout: 2000 });
      queued(await app.ingest(account, 'users', { anonymousId: 'anon-live', attributes: {} }));
      await app.projected();
      await leadLink(page, 'anon-live').waitFor({ timeout: 2000 });

      expect(await listedIds(page)).to.deep.equal(['anon-live', 'u-live']);
      const known = leadRows(page).filter({ has: leadLink(page, 'u-live') });
      expect(await known.locator('td').allTextContents()).to.include.members(['u-live', 'Lia Live', 'lia@example.com']);
      const anonymous = leadRows(page).filter({ has: leadLink(page, 'anon-live') });
      expect(await anonymous.locator('td').first().textContent()).to.equal('anon-live anonymous');
      expect(await known.locator('td').first().textContent()).to.equal('u-live');

      // A row opens its lead.
      await leadLink(page, 'u-live').click();
      await page.getByRole('heading', { name: 'Lead u-live' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/leads/u-live');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('searches by email and by id, filters known or anonymous leads, and pages with next and previous', async () => {
    const known = Array.from({ length: 9 }, (_, i) => ({ userId: `k-${i + 1}`, email: `k-${i + 1}@example.com`, firstName: `Known${i + 1}`, attributes: {} }));
    const anonymous = Array.from({ length: 3 }, (_, i) => ({ anonymousId: `a-${i + 1}`, attributes: {} }));
    for (const result of bulkResults(await app.ingest(account, 'users/bulk', [...known, ...anonymous]))) expect(result.status).to.equal('queued');
    await app.projected();

    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads');
      // 14 leads: these 12 and the 2 of the test before.
      await rowCountBecomes(page, 14);
      await screenshot(page, 'leads-1280');

      await page.getByLabel('Per page').selectOption('10');
      await rowCountBecomes(page, 10);
      expect((await listedIds(page)).slice(0, 3)).to.deep.equal(['a-3', 'a-2', 'a-1']);
      expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).to.equal(true);
      await page.getByRole('button', { name: 'Next page' }).click();
      await page.getByText('Page 2', { exact: true }).waitFor();
      await rowCountBecomes(page, 4);
      expect(await listedIds(page)).to.deep.equal(['k-2', 'k-1', 'anon-live', 'u-live']);
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).to.equal(true);
      await page.getByRole('button', { name: 'Previous page' }).click();
      await page.getByText('Page 1', { exact: true }).waitFor();
      await rowCountBecomes(page, 10);

      // Typing searches by itself, after a pause.
      await page.getByLabel('Search leads').fill('K-7@EXAMPLE');
      await rowCountBecomes(page, 1);
      await leadLink(page, 'k-7').waitFor();
      // Enter searches at once.
      await page.getByLabel('Search leads').fill('a-2');
      await page.getByLabel('Search leads').press('Enter');
      await leadLink(page, 'a-2').waitFor();
      await rowCountBecomes(page, 1);
      await page.getByLabel('Search leads').fill('nobody-at-all');
      await page.getByText('No lead matches.').waitFor();

      await page.getByLabel('Search leads').fill('');
      await page.getByLabel('Per page').selectOption('25');
      await page.getByLabel('Kind').selectOption('anonymous');
      await rowCountBecomes(page, 4);
      expect(await listedIds(page)).to.deep.equal(['a-3', 'a-2', 'a-1', 'anon-live']);
      for (const cell of await page.locator('table.data tbody tr td:first-child').allTextContents()) expect(cell).to.match(/ anonymous$/);
      await page.getByLabel('Kind').selectOption('known');
      await rowCountBecomes(page, 10);
      expect(await page.getByText('anonymous', { exact: true }).count()).to.equal(0);

      await page.setViewportSize({ width: 400, height: 800 });
      await page.getByLabel('Kind').selectOption('');
      await rowCountBecomes(page, 14);
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      await screenshot(page, 'leads-400');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('shows a lead: every system attribute, typed custom attributes, merged ids and the timeline; a client value is text and runs nothing', async () => {
    queued(await app.ingest(account, 'users', { anonymousId: 'anon-m', attributes: { first_seen_on: 'landing page' } }));
    queued(
      await app.ingest(account, 'users', {
        userId: 'u-m',
        anonymousId: 'anon-m',
        firstName: injection,
        email: 'm@example.com',
        city: 'Lisbon',
        attributes: { plan: 'gold', seats: 12, trial: true, renews_at: '2026-12-01T10:00:00Z', note: injection },
      }),
    );
    const eventTrackID = queued(await app.ingest(account, 'events', { userId: 'u-m', eventName: 'Purchased', eventData: { sku: 'A-1' } }));
    await app.projected();

    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads/u-m');
      await page.getByRole('heading', { name: 'Lead u-m' }).waitFor();

      const system = page.getByRole('region', { name: 'System attributes', exact: true });
      await system.waitFor();
      const valueOf = async (table: typeof system, name: string) => table.getByRole('row').filter({ has: page.getByRole('rowheader', { name, exact: true }) }).locator('td').allTextContents();
      // Those not set are hidden at first (dashboard-leads-state.e2e.spec.ts): all of them, shown.
      await page.getByLabel('Hide attributes not set').uncheck();
      for (const attribute of systemAttributes) {
        expect(await system.getByRole('rowheader', { name: attribute.name, exact: true }).count(), attribute.name).to.equal(1);
      }
      expect(await valueOf(system, 'userId')).to.deep.equal(['STRING', 'u-m']);
      expect(await valueOf(system, 'firstName')).to.deep.equal(['STRING', injection]);
      expect(await valueOf(system, 'email')).to.deep.equal(['STRING', 'm@example.com']);
      expect(await valueOf(system, 'city')).to.deep.equal(['STRING', 'Lisbon']);
      expect(await valueOf(system, 'opt_in_sms')).to.deep.equal(['BOOL', 'true']);
      expect(await valueOf(system, 'points')).to.deep.equal(['INT4', '0']);
      expect(await valueOf(system, 'phone')).to.deep.equal(['STRING', 'not set']);

      const custom = page.getByRole('region', { name: 'Custom attributes', exact: true });
      expect(await valueOf(custom, 'plan')).to.deep.equal(['string', 'gold']);
      expect(await valueOf(custom, 'seats')).to.deep.equal(['number', '12']);
      expect(await valueOf(custom, 'trial')).to.deep.equal(['boolean', 'true']);
      const [renewsType] = await valueOf(custom, 'renews_at');
      expect(renewsType).to.equal('datetime');
      const renews = custom.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'renews_at', exact: true }) });
      expect(await renews.locator('time').getAttribute('datetime')).to.equal('2026-12-01T10:00:00.000Z');
      expect(await valueOf(custom, 'note')).to.deep.equal(['string', injection]);
      // The anonymous profile's attribute came along with the merge.
      expect(await valueOf(custom, 'first_seen_on')).to.deep.equal(['string', 'landing page']);
      expect(await page.locator('img').count()).to.equal(0);

      const timeline = page.getByRole('region', { name: 'Timeline', exact: true });
      const eventRow = timeline.getByRole('row').filter({ hasText: 'Event Purchased' });
      await eventRow.waitFor();
      expect(await eventRow.textContent()).to.contain('{"sku":"A-1"}');
      const trackLink = eventRow.getByRole('link', { name: eventTrackID });
      expect(await trackLink.getAttribute('href')).to.equal(`/dashboard/track/${eventTrackID}`);
      expect(await timeline.getByRole('row').filter({ hasText: 'Profiles merged (userId u-m)' }).count()).to.equal(1);
      expect(await timeline.getByRole('row').filter({ hasText: 'Profile sent (anonymousId anon-m)' }).count()).to.equal(1);
      // Latest first: the event, then the profile with the merge, then the anonymous profile.
      const whats = await timeline.locator('tbody tr td:nth-child(2)').allTextContents();
      expect(whats[0]).to.equal('Event Purchased');
      expect(whats.at(-1)).to.equal('Profile sent (anonymousId anon-m)');
      await screenshot(page, 'lead-1280');
      await page.setViewportSize({ width: 400, height: 800 });
      expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(400);
      // The timeline stacks: each entry's trackID within the screen, not scrolled off to the side.
      const linkBox = await trackLink.boundingBox();
      expect(linkBox && linkBox.x + linkBox.width, 'right edge of the trackID').to.be.at.most(400);
      await screenshot(page, 'lead-400');
      await page.setViewportSize({ width: 1280, height: 800 });

      // The merged anonymous id opens its known user.
      const merged = page.getByRole('region', { name: 'Merged anonymous ids', exact: true });
      await merged.getByRole('link', { name: 'anon-m', exact: true }).click();
      await page.getByText('The anonymous id anon-m was merged into this known user.').waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/leads/anon-m');
      expect(await page.getByRole('heading', { name: 'Lead u-m' }).count()).to.equal(1);

      await page.goBack();
      await trackLink.click();
      await page.getByRole('heading', { name: 'Track lookup' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal(`/dashboard/track/${eventTrackID}`);
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it("never shows another account's leads: not in the list, not found by search or by URL, and its API refuses the session", async () => {
    queued(await app.ingest(other, 'users', { userId: 'globex-secret', email: 'secret@globex.example', attributes: {} }));
    await app.projected();
    const refused = [`/admin/v1/accounts/${other.licenseCode}/leads`, `/admin/v1/accounts/${other.licenseCode}/tokens`];
    const { page, expectNoProblems, close } = await openPage(browser, {
      expectedFailedLoads: [...signInFailedLoads, ...refused, `/admin/v1/accounts/${account.licenseCode}/leads/globex-secret`],
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads');
      await leadLink(page, 'u-live').waitFor();
      expect(await listedIds(page)).not.to.include('globex-secret');
      await page.getByLabel('Search leads').fill('globex');
      await page.getByText('No lead matches.').waitFor();

      await page.goto(`${app.baseUrl}/dashboard/leads/globex-secret`);
      await page.getByRole('alert').getByText('No lead with the id globex-secret in this account.').waitFor();
      expect(await page.getByText('secret@globex.example').count()).to.equal(0);

      for (const path of refused) {
        const status = await page.evaluate(`fetch(${JSON.stringify(path)}, { credentials: 'same-origin' }).then((reply) => reply.status)`);
        expect(status, path).to.equal(403);
      }
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
