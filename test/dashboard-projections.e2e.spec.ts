import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { adminToken, servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInAsOperator, signInFailedLoads } from './support/dashboard-session.js';
import { queued } from './support/replies.js';

/** The Projections page (operators), signed in through the form, with the projection workers running. */

const names = ['leads', 'user-events', 'products', 'track-index'];


describe('dashboard projections (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));

  const leadIds = async (): Promise<string[]> => {
    const reply = await app.get<{ leads: { userId?: string }[] }>(`/admin/v1/accounts/${account.licenseCode}/leads`, `Bearer ${account.accessToken}`);
    expect(reply.status).to.equal(200);
    return reply.body.leads.map((lead) => String(lead.userId));
  };

  /** When the last rebuild of a projection ended (ms), from the API the page reads; null: never. */
  const lastRebuildEnd = async (name: string): Promise<number | null> => {
    const reply = await app.get<{ projections: { projection: string; rebuild: { finishedAt?: string | null } | null }[] }>('/admin/v1/projections', `Bearer ${adminToken}`);
    expect(reply.status).to.equal(200);
    const finishedAt = reply.body.projections.find((p) => p.projection === name)?.rebuild?.finishedAt;
    return finishedAt ? Date.parse(finishedAt) : null;
  };
  const nextSecondAfter = async (ms: number | null): Promise<void> => {
    if (ms === null) return;
    const wait = (Math.floor(ms / 1000) + 1) * 1000 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };

  for (const width of [1280, 400]) {
    it(`shows every projection and rebuilds leads from the page, following its progress to the end, at ${width} px`, async () => {
      for (const userId of [`a-${width}`, `b-${width}`]) queued(await app.ingest(account, 'users', { userId, attributes: {} }));
      await app.projected();
      const before = await leadIds();
      expect(before).to.include.members([`a-${width}`, `b-${width}`]);

      const { page, expectNoProblems, close } = await openPage(browser, { width, expectedFailedLoads: signInFailedLoads });
      try {
        await signInAsOperator(page, app.baseUrl, '/dashboard/projections');
        await page.getByRole('heading', { name: 'Projections', exact: true }).waitFor();
        const table = page.getByRole('table');
        await table.waitFor();
        expect(await table.locator('tbody th').allTextContents()).to.deep.equal(names);
        const leadsRow = table.locator('tbody tr').filter({ has: page.locator('th', { hasText: /^leads$/ }) });
        const cells = await leadsRow.locator('td').allTextContents();
        expect(cells[1], 'events applied').to.match(/^\d+$/);
        expect(Number(cells[1])).to.be.at.least(2);
        expect(cells[2], 'lag').to.match(/events?, [\d.]+ s$/);
        expect(cells[3], 'active worker').to.not.equal('none');
        expect(cells[5], 'parked').to.equal('0');
        // No parked event: no retry to offer.
        expect(await page.getByRole('button', { name: /Retry parked/ }).count()).to.equal(0);

        // Rebuild asks first; the confirmation is a real button.
        const section = page.getByRole('region', { name: 'leads', exact: true });
        await section.getByRole('button', { name: 'Rebuild leads…' }).click();
        const confirm = section.getByRole('group', { name: 'Confirm the rebuild of leads' });
        expect(await confirm.textContent()).to.include('every stored event is replayed');
        await confirm.getByRole('button', { name: 'Cancel' }).click();
        expect(await confirm.count()).to.equal(0);
        const progress = section.getByRole('status').filter({ hasText: 'Rebuild:' });
        const earlier = (await progress.textContent()) ?? '';
        // The page shows a rebuild's end to the second: a rebuild ending within the second the
        // earlier one ended would read the same. Both rebuilds take well under a second here.
        await nextSecondAfter(await lastRebuildEnd('leads'));
        await section.getByRole('button', { name: 'Rebuild leads…' }).click();
        await confirm.getByRole('button', { name: 'Yes, rebuild leads' }).click();
        // Followed every second until it ends (an earlier rebuild's end is another text: its time).
        await progress.filter({ hasText: 'Rebuild: finished', hasNotText: earlier }).waitFor({ timeout: 20_000 });
        expect(await leadsRow.locator('td').last().textContent()).to.match(/^finished /);
        await screenshot(page, `projections-${width}`);
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        expectNoProblems();
      } finally {
        await close();
      }
      await app.projected();
      expect(await leadIds()).to.include.members(before);
    });
  }

  it('shows parked events with their error and retries them from the page', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-parked', attributes: {} }));
    await app.pool.query("ALTER TABLE user_events ADD CONSTRAINT no_blocked_events CHECK (event_name <> 'blocked')");
    try {
      queued(await app.ingest(account, 'events', { userId: 'u-parked', eventName: 'blocked' }));
      await app.projected();
      const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
      try {
        await signInAsOperator(page, app.baseUrl, '/dashboard/projections');
        const section = page.getByRole('region', { name: 'user-events', exact: true });
        await section.getByRole('heading', { name: 'Parked events (1), latest first' }).waitFor();
        expect(await section.locator('ul.parked li').textContent()).to.include('EventTracked').and.include('no_blocked_events');
        const row = page.getByRole('table').locator('tbody tr').filter({ has: page.locator('th', { hasText: /^user-events$/ }) });
        expect(await row.locator('td').nth(5).textContent()).to.equal('1');

        // Its cause still there: still parked, one attempt more.
        const retry = section.getByRole('button', { name: 'Retry parked events of user-events' });
        await retry.click();
        await section.getByText('1 retried: 0 applied, 1 still parked.').waitFor();
        await section.getByText(/after 2 attempts/).waitFor();
        await screenshot(page, 'projections-parked-1280');

        // Fixed: applied, and nothing is left to retry.
        await app.pool.query('ALTER TABLE user_events DROP CONSTRAINT no_blocked_events');
        await retry.click();
        await section.getByText('1 retried: 1 applied, 0 still parked.').waitFor();
        await retry.waitFor({ state: 'detached' });
        expect(await row.locator('td').nth(5).textContent()).to.equal('0');
        expectNoProblems();
      } finally {
        await close();
      }
    } finally {
      await app.pool.query('ALTER TABLE user_events DROP CONSTRAINT IF EXISTS no_blocked_events');
    }
  });

  it('is no page of an account session, and the server refuses it the projections', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: [...signInFailedLoads, '/admin/v1/projections'] });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/projections');
      // The shell refuses the page to an account, in text; no status is shown.
      await page.getByRole('heading', { name: 'Operators only' }).waitFor();
      expect(await page.getByRole('alert').textContent()).to.include('for operators');
      expect(await page.getByRole('table').count()).to.equal(0);
      expect(await page.getByRole('link', { name: 'Projections' }).count()).to.equal(0);
      const refused = (await page.evaluate(
        "fetch('/admin/v1/projections', { credentials: 'same-origin' }).then(async (r) => [r.status, (await r.json()).error])",
      )) as [number, string];
      expect(refused[0]).to.equal(403);
      expect(refused[1]).to.be.a('string').and.have.length.above(0);
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
