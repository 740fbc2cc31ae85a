import { hostname } from 'node:os';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { adminToken, servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInAsOperator, signInFailedLoads } from './support/dashboard-session.js';
import { accountIdOf, accountsProjected, cursorsOf, holdLeadsOf } from './support/account-replay.js';
import { eventually } from './support/eventually.js';
import { queued } from './support/replies.js';

/** The Projections page (operators), signed in through the form, with the projection workers running. */

const names = ['leads', 'user-events', 'products', 'track-index'];
const worker = `${process.pid}@${hostname()}`;
const injection = '<img src=x onerror=alert(1)>';


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
        const table = page.getByRole('table', { name: 'Projections', exact: true });
        await table.waitFor();
        expect(await table.locator('tbody th').allTextContents()).to.deep.equal(names);
        const leadsRow = table.locator('tbody tr').filter({ has: page.locator('th', { hasText: /^leads$/ }) });
        const cells = await leadsRow.locator('td').allTextContents();
        expect(cells[0], 'events applied').to.match(/^\d+updated /);
        expect(Number(/^\d+/.exec(cells[0] ?? '')?.[0])).to.be.at.least(2);
        expect(cells[1], 'lag').to.match(/events?, [\d.]+ s$/);
        expect(cells[2], 'accounts behind').to.match(/^\d+$/);
        expect(cells[3], 'parked').to.equal('0');

        // Who applies them: this process's worker holds every part.
        const workers = page.getByRole('table', { name: 'Workers' });
        expect(await workers.locator('tbody th').allTextContents()).to.deep.equal([worker]);
        expect(await workers.locator('tbody td').first().textContent()).to.equal(`16${Array.from({ length: 16 }, (_, i) => i).join(', ')}`);
        const parts = page.getByRole('table', { name: 'Parts' });
        expect(await parts.locator('tbody th').allTextContents()).to.deep.equal(Array.from({ length: 16 }, (_, i) => String(i)));
        const partCells = await parts.locator('tbody tr').first().locator('td').allTextContents();
        expect(partCells[0], 'owner').to.equal(worker);
        expect(partCells[1], 'epoch').to.match(/^\d+$/);
        expect(partCells[2], 'lease until').to.match(/\d{1,2}:\d\d:\d\d/);
        expect(await page.getByText('16 of 16 held').count()).to.equal(1);
        await page.getByText('No account is behind').waitFor();
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
        expect(await row.locator('td').nth(3).textContent()).to.equal('1');

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
        expect(await row.locator('td').nth(3).textContent()).to.equal('0');
        expectNoProblems();
      } finally {
        await close();
      }
    } finally {
      await app.pool.query('ALTER TABLE user_events DROP CONSTRAINT IF EXISTS no_blocked_events');
    }
  });

  it("rebuilds one account from the form, after a confirmation naming it: its lead goes and comes back, another account's stays", async () => {
    const target = await app.account(`Target ${injection}`);
    const targetId = await accountIdOf(app, target);
    queued(await app.ingest(target, 'users', { userId: 'target-lead', attributes: {} }));
    queued(await app.ingest(account, 'users', { userId: 'bystander-lead', attributes: {} }));
    await accountsProjected(app, [targetId, await accountIdOf(app, account)]);
    const bystanderLeads = await leadIds();
    expect(bystanderLeads).to.include('bystander-lead');
    const leadsOf = async (license: string): Promise<string[]> =>
      (await app.get<{ leads: { userId: string }[] }>(`/admin/v1/accounts/${license}/leads`, `Bearer ${adminToken}`)).body.leads.map((lead) => lead.userId);
    expect(await leadsOf(target.licenseCode)).to.deep.equal(['target-lead']);

    const bystanderCursors = await cursorsOf(app.pool, await accountIdOf(app, account));
    const unknownLicense = 'ffffffffffffffffffffffff';
    const { page, expectNoProblems, close } = await openPage(browser, {
      expectedFailedLoads: [...signInFailedLoads, `/admin/v1/accounts/${unknownLicense}/projections/rebuild`],
    });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    // The replay of the target's leads waits here until released: the page is looked at meanwhile.
    const hold = await holdLeadsOf(app.pool, targetId);
    try {
      await signInAsOperator(page, app.baseUrl, '/dashboard/projections');
      const form = page.getByRole('form', { name: 'Rebuild one account' });
      const confirm = page.getByRole('group', { name: 'Confirm the rebuild of one account' });

      // An unknown license code: the server's answer, as text; nothing asked for.
      await form.getByLabel('License code').fill(unknownLicense);
      await form.getByRole('button', { name: 'Rebuild account…' }).click();
      await confirm.getByRole('button', { name: 'Yes, rebuild this account' }).click();
      await page.getByRole('alert').filter({ hasText: 'unknown license code' }).waitFor();

      // Cancelled: nothing happens.
      await form.getByLabel('License code').fill(target.licenseCode);
      await form.getByLabel('Projection').selectOption('');
      await form.getByRole('button', { name: 'Rebuild account…' }).click();
      expect(await confirm.locator('p').textContent()).to.equal(
        `Rebuild every read model of account Target ${injection} (license ${target.licenseCode})? Until its replay ends, its read models are incomplete.`,
      );
      // The account's name is text, never markup.
      expect(await confirm.locator('img').count()).to.equal(0);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      expect(await confirm.count()).to.equal(0);
      expect(await leadsOf(target.licenseCode)).to.deep.equal(['target-lead']);

      await form.getByRole('button', { name: 'Rebuild account…' }).click();
      await confirm.getByRole('button', { name: 'Yes, rebuild this account' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Asked for: leads, user-events, products, track-index of account Target ${injection} (license ${target.licenseCode}) (id ${targetId}) emptied` })
        .waitFor();
      // Its lead is gone until the replay reaches it; the other account's is there.
      expect(await leadsOf(target.licenseCode)).to.deep.equal([]);
      expect(await leadIds()).to.deep.equal(bystanderLeads);
      // The page, read again at once and every 10 s, shows the account furthest behind: by its
      // leads once its other read models have caught up.
      const behind = page.getByRole('table', { name: 'Accounts furthest behind' });
      const row = behind.getByRole('row').filter({ hasText: targetId }).filter({ hasText: 'leads' });
      await row.waitFor({ timeout: 15_000 });
      const cells = await row.locator('td').allTextContents();
      expect(cells[0], 'projection').to.equal('leads');
      expect(cells[1], 'events').to.equal('1');
      expect(await behind.locator('tbody tr').count()).to.equal(1);
      await screenshot(page, 'projections-account-rebuild-1280');
      await hold.release();

      await eventually(async () => (await leadsOf(target.licenseCode)).includes('target-lead') || undefined, 10_000, () => 'the lead never came back');
      // At the next reading (every 10 s), nobody is behind any more.
      await page.getByText('No account is behind').waitFor({ timeout: 15_000 });
      expect(await leadIds()).to.deep.equal(bystanderLeads);
      // Never replayed: its cursors are those it had.
      expect(await cursorsOf(app.pool, await accountIdOf(app, account))).to.deep.equal(bystanderCursors);
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await hold.release();
      await close();
    }
  });

  it("says on the Overview how far behind the account's own read models are: another account's backlog does not count", async () => {
    const late = await app.account('late');
    const lateId = await accountIdOf(app, late);
    await app.projected();
    const hold = await holdLeadsOf(app.pool, lateId);
    try {
      // The late account's lead waits at the hold; the first account's item, stored before it, is
      // applied. (Stored after it, on PostgreSQL it would wait too: the held batch's open
      // transaction keeps later appends from the catch-up read.)
      queued(await app.ingest(account, 'users', { userId: 'on-time-lead', attributes: {} }));
      queued(await app.ingest(late, 'users', { userId: 'late-lead', attributes: {} }));
      await eventually(async () => (await leadIds()).includes('on-time-lead') || undefined, 10_000, () => 'the on-time lead never appeared');
      const overviewOf = async (owner: Credentials) =>
        (await app.get<{ projections: { lagSeconds: number; lagEvents: number; caughtUp: boolean } }>(`/admin/v1/accounts/${owner.licenseCode}/overview`, `Bearer ${owner.accessToken}`)).body
          .projections;
      await eventually(async () => (await overviewOf(account)).caughtUp, 10_000, () => 'the on-time account never caught up');
      expect(await overviewOf(account)).to.deep.equal({ lagSeconds: 0, lagEvents: 0, caughtUp: true });
      // Its other read models apply the late item; its leads wait.
      const lateLag = await eventually(async () => {
        const lag = await overviewOf(late);
        return lag.lagEvents === 1 && lag;
      }, 10_000, () => 'the late account is not 1 event behind');
      expect(lateLag.caughtUp).to.equal(false);
      expect(lateLag.lagSeconds).to.be.above(0);

      for (const [owner, text] of [
        [account, /^Read models: caught up · updated /],
        [late, /^Read models: [\d.]+ s behind \(1 event\) · updated /],
      ] as const) {
        const { page, expectNoProblems, close } = await openPage(browser, { expectedFailedLoads: signInFailedLoads });
        try {
          await signInAsAccount(page, app.baseUrl, owner, '/dashboard');
          await page.locator('p.lag').filter({ hasText: text }).waitFor();
          expectNoProblems();
        } finally {
          await close();
        }
      }
    } finally {
      await hold.release();
    }
    await app.projected();
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
