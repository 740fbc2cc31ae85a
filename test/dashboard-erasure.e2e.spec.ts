import { expect } from 'chai';
import type { Browser, Locator, Page } from 'playwright-core';
import type { Erasure } from '../src/erasure/requests.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { itemError, queued } from './support/replies.js';

/** The Erasures page and "Erase this person…" on the lead page, against the real service and its erasure runner. */
const injection = '<img src=x onerror=alert(1)>';
const suppressLabel = 'Also refuse new items for these ids (suppress)';
/** An erasure waits 6 s for every process to drop the keys, then rebuilds the account's read models. */
const doneMs = 60_000;
/** Every instant of the dashboard: `2026-11-23 06:22:38 UTC`, whatever the browser's zone. */
const utcInstant = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/;
const zone = 'America/Los_Angeles';

/** The elements that reach past the window's right edge (outside the boxes that scroll), as tag.class. */
const widest = `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll-box, pre')).map((e) => e.tagName + '.' + e.className).join(' ')`;

/** The row of the erasure naming `id` (its userId or anonymousId), by text: while pending (once done, only the ids' pseudonyms remain). */
const erasureRow = (page: Page, id: string): Locator => page.getByRole('row').filter({ has: page.locator('td[data-label="Person"] code').getByText(id, { exact: true }) });
/** The row of the erasure `erasureId`. */
const rowOfErasure = (page: Page, erasureId: string): Locator => page.locator(`tr[data-erasure="${erasureId}"]`);
const cell = (row: Locator, label: string): Locator => row.locator(`td[data-label="${label}"]`);
const focused = (page: Page, locator: Locator) => locator.and(page.locator(':focus')).waitFor();

async function fitsAt(page: Page, width: number, name: string): Promise<void> {
  await page.setViewportSize({ width, height: 900 });
  expect(await page.evaluate(widest), 'elements past the right edge').to.equal('');
  expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
  await screenshot(page, `${name}-${width}`);
}

describe('dashboard erasures (e2e)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));

  /** The account's erasure `erasureId` as the API answers it. */
  async function erasureOf(erasureId: string): Promise<Erasure> {
    const reply = await app.get<Erasure>(`/v1/accounts/${account.licenseCode}/erasures/${erasureId}`, `Bearer ${account.accessToken}`);
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    return reply.body;
  }

  /**
   * Waits for the row of `id`, shown pending, to say done, then checks its times, counts and error
   * against the API's; the ids are gone by then, their pseudonyms shown in their place.
   */
  async function shownDone(page: Page, id: string): Promise<Erasure> {
    const erasureId = (await erasureRow(page, id).getAttribute('data-erasure')) as string;
    const row = rowOfErasure(page, erasureId);
    await cell(row, 'State').getByText('done', { exact: true }).waitFor({ timeout: doneMs });
    const erasure = await erasureOf(erasureId);
    expect(erasure.state).to.equal('done');
    expect(await cell(row, 'Person').textContent()).to.equal(
      [erasure.userRef !== null ? `userId erased, pseudonym ${erasure.userRef}` : '', erasure.anonymousRef !== null ? `anonymousId erased, pseudonym ${erasure.anonymousRef}` : ''].join(''),
    );
    expect(await cell(row, 'Person').textContent()).not.to.contain(id);
    const counts = erasure.counts as NonNullable<Erasure['counts']>;
    const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    expect(await cell(row, 'Removed').textContent()).to.equal(
      [
        plural(counts.keys, 'key', 'keys'),
        plural(counts.events, 'event', 'events'),
        plural(counts.leads, 'lead', 'leads'),
        plural(counts.rejectedItems, 'refused item', 'refused items'),
        plural(counts.idempotencyReplies, 'recorded reply', 'recorded replies'),
      ].join(', '),
    );
    for (const label of ['Requested', 'Done']) {
      const time = cell(row, label).locator('time');
      expect(await time.textContent()).to.match(utcInstant);
      // The browser's own zone is on hover, through the dashboard's one time component.
      expect(await time.getAttribute('title')).to.contain(zone);
    }
    expect(await cell(row, 'Done').locator('time').getAttribute('datetime')).to.equal(new Date(erasure.doneAt as string).toISOString());
    expect(await cell(row, 'Error').textContent()).to.equal('—');
    return erasure;
  }

  it('erases a lead from its page: a confirmation naming them, then the Erasures page follows it from pending to done, and the lead is gone', async () => {
    const email = 'zelda.erase-me.4711@example.com';
    queued(await app.ingest(account, 'users', { userId: 'u-erase', firstName: 'Zelda', email, attributes: {} }));
    queued(await app.ingest(account, 'events', { userId: 'u-erase', eventName: 'Viewed', eventData: { page: '/pricing' } }));
    await app.projected();
    const leadPath = `/admin/v1/accounts/${account.licenseCode}/leads/u-erase`;
    const watched = await openPage(browser, { timezoneId: zone, expectedFailedLoads: [...signInFailedLoads, leadPath] });
    const { page, expectNoProblems, close } = watched;
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads/u-erase');
      await page.getByRole('heading', { name: 'Lead u-erase' }).waitFor();
      await page.getByRole('cell', { name: email }).waitFor();

      const opener = page.getByRole('button', { name: 'Erase this person…' });
      const confirmation = page.getByRole('group', { name: 'Erase u-erase and everything they sent? This cannot be undone.' });
      // Opened, the focus is on its first control; Cancel and Escape close it and give the focus back.
      await opener.click();
      await focused(page, confirmation.getByLabel(suppressLabel));
      expect(await opener.getAttribute('aria-expanded')).to.equal('true');
      await confirmation.getByRole('button', { name: 'Cancel' }).click();
      await confirmation.waitFor({ state: 'detached' });
      await focused(page, opener);
      await page.keyboard.press('Enter');
      await focused(page, confirmation.getByLabel(suppressLabel));
      await page.keyboard.press('Escape');
      await confirmation.waitFor({ state: 'detached' });
      await focused(page, opener);

      await opener.click();
      await confirmation.getByRole('button', { name: 'Yes, erase' }).waitFor();
      await fitsAt(page, 400, 'erase-lead-confirm');
      await fitsAt(page, 1280, 'erase-lead-confirm');
      await confirmation.getByRole('button', { name: 'Yes, erase' }).click();

      await page.getByRole('heading', { name: 'Erasures' }).waitFor();
      expect(new URL(page.url()).pathname).to.equal('/dashboard/erasures');
      await page.getByRole('status').getByText('Requested the erasure of u-erase.', { exact: true }).waitFor();
      const row = erasureRow(page, 'u-erase');
      // Pending for at least the 6 s the runner waits; then done, without a reload.
      await cell(row, 'State').getByText('pending', { exact: true }).waitFor();
      expect(await cell(row, 'Requested').locator('.by').textContent()).to.equal('by account session');
      expect(await cell(row, 'Suppress').textContent()).to.equal('no');
      await page.getByText('Refreshed every 2 seconds while one is pending.').waitFor();
      const erasure = await shownDone(page, 'u-erase');
      expect(erasure.counts).to.include({ leads: 1 });
      expect(erasure.counts?.events).to.be.at.least(1);
      await page.getByText('None is pending.').waitFor();

      // Back on the lead's page: no such lead any more, and nothing it held.
      await page.goBack();
      await page.getByRole('heading', { name: 'Lead u-erase' }).waitFor();
      await page.getByRole('alert').getByText('No lead with the id u-erase in this account.', { exact: true }).waitFor();
      expect(await page.content()).not.to.contain(email);
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('requests an erasure of an anonymous id with suppress from the Erasures page, and shows a userId that holds markup as text', async () => {
    queued(await app.ingest(account, 'users', { anonymousId: 'anon-erase-7', attributes: { plan: 'trial' } }));
    queued(await app.ingest(account, 'users', { userId: injection, firstName: 'Mallory', attributes: {} }));
    await app.projected();
    const { page, expectNoProblems, close } = await openPage(browser, { timezoneId: zone, expectedFailedLoads: signInFailedLoads });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard');
      await page.getByRole('link', { name: 'Erasures' }).click();
      await page.getByRole('heading', { name: 'Erasures' }).waitFor();
      const submit = page.getByRole('button', { name: 'Request erasure…' });
      await submit.click();
      await page.getByRole('alert').getByText('Give a userId, an anonymousId or both.', { exact: true }).waitFor();

      await page.getByLabel('anonymousId', { exact: true }).fill('anon-erase-7');
      await page.getByLabel(suppressLabel).check();
      await submit.click();
      const confirmation = page.getByRole('group', { name: 'Erase anonymous id anon-erase-7 and everything they sent? This cannot be undone.' });
      await focused(page, confirmation.getByRole('button', { name: 'Yes, erase' }));
      expect(await confirmation.textContent()).to.contain('New items naming these ids will be refused from now on.');
      expect(await page.getByRole('alert').count()).to.equal(0);
      await fitsAt(page, 400, 'erasure-form-confirm');
      await fitsAt(page, 1280, 'erasure-form-confirm');
      await confirmation.getByRole('button', { name: 'Cancel' }).click();
      await focused(page, submit);
      expect(await page.getByLabel('anonymousId', { exact: true }).inputValue()).to.equal('anon-erase-7');
      await submit.click();
      await confirmation.getByRole('button', { name: 'Yes, erase' }).click();

      // The form is emptied; the focus is on what was requested.
      await focused(page, page.getByRole('status').getByText('Requested the erasure of anonymous id anon-erase-7, refusing their new items.', { exact: true }));
      expect(await page.getByLabel('anonymousId', { exact: true }).inputValue()).to.equal('');
      expect(await page.getByLabel(suppressLabel).isChecked()).to.equal(false);
      const anonymous = erasureRow(page, 'anon-erase-7');
      await cell(anonymous, 'State').getByText('pending', { exact: true }).waitFor();
      expect(await cell(anonymous, 'Suppress').textContent()).to.equal('yes');
      expect(await cell(anonymous, 'Person').textContent()).to.equal('anonymousId anon-erase-7');
      const anonymousDone = await shownDone(page, 'anon-erase-7');
      // Suppressed: a new item naming the id is refused.
      expect(itemError(await app.ingest(account, 'users', { anonymousId: 'anon-erase-7', attributes: {} }))).to.match(/^anonymousId is suppressed/);

      // What a client sent is text, in the confirmation and in the list.
      await page.getByLabel('userId', { exact: true }).fill(injection);
      await submit.click();
      await page.getByRole('group', { name: `Erase ${injection} and everything they sent? This cannot be undone.` }).getByRole('button', { name: 'Yes, erase' }).click();
      const marked = erasureRow(page, injection);
      expect(await cell(marked, 'Person').textContent()).to.equal(`userId ${injection}`);
      const markedDone = await shownDone(page, injection);
      expect(await page.locator('main img').count()).to.equal(0);
      expect(dialogs).to.deep.equal([]);
      // The latest first.
      const shownIds = await page.locator('tr[data-erasure]').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-erasure')));
      expect(shownIds.slice(0, 2)).to.deep.equal([markedDone.id, anonymousDone.id]);

      await fitsAt(page, 1280, 'erasures');
      await fitsAt(page, 400, 'erasures');
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
