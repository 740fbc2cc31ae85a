import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser, type WatchedPage } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { until } from './support/eventually.js';
import { queued } from './support/replies.js';

/** The Live events and Track lookup pages, signed in through the form, on the real API. */

const injection = '<img src=x onerror=alert(1)>';


/** Fails the test on any alert, confirm or prompt: no value a client sent may run. */
function failOnDialog(page: Page, seen: string[]): void {
  page.on('dialog', (dialog) => {
    seen.push(dialog.message());
    void dialog.dismiss();
  });
}

describe('dashboard live events and track lookup (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  before(async () => {
    other = await app.account('globex');
  });

  const postEvent = async (who: Credentials, eventName: string, eventData: unknown = {}) =>
    queued(await app.ingest(who, 'events', { userId: 'u-live', eventName, eventData }));
  const liveRow = (page: Page, trackID: string) => page.getByRole('row').filter({ hasText: trackID });
  /** Whether the track index lists `trackID` for `who` (the API the page polls). */
  const indexed = async (who: Credentials, trackID: string): Promise<boolean> => {
    const reply = await app.get<{ items: { trackID: string }[] }>(`/admin/v1/accounts/${who.licenseCode}/live?limit=200`, `Bearer ${who.accessToken}`);
    return reply.body.items.some((item) => item.trackID === trackID);
  };
  const untilIndexed = (who: Credentials, trackID: string) => until(() => indexed(who, trackID), 10_000, () => `${trackID} not indexed`);

  for (const width of [1280, 400]) {
    it(`shows new items live, pauses and resumes, filters by kind and opens a row's stored JSON at ${width} px`, async () => {
      const watched: WatchedPage = await openPage(browser, { width, expectedFailedLoads: signInFailedLoads });
      const { page } = watched;
      const dialogs: string[] = [];
      failOnDialog(page, dialogs);
      try {
        const foreign = await postEvent(other, 'Foreign');
        await signInAsAccount(page, app.baseUrl, account, '/dashboard/live');
        await page.getByRole('heading', { name: 'Live events' }).waitFor();

        // Posted with the page open: listed within 2 s of its indexing (the page polls every
        // second), newest first. The 2 s count from the indexing, which the projection worker
        // does in its own time: counted from the post, a loaded machine's worker used them up.
        const first = await postEvent(account, 'Viewed', { note: injection });
        await untilIndexed(account, first);
        await liveRow(page, first).waitFor({ timeout: 2_000 });
        const second = await postEvent(account, `Clicked at ${width}`);
        await untilIndexed(account, second);
        await liveRow(page, second).waitFor({ timeout: 2_000 });
        const bodyRows = page.locator('table.live-table tbody tr');
        expect(await bodyRows.first().textContent()).to.include(second);
        // A row names the event, its user and the start of its payload, the client's text as text.
        const firstRow = liveRow(page, first);
        expect(await firstRow.locator('td[data-label="Item"]').textContent()).to.equal('Viewed');
        expect(await firstRow.locator('td[data-label="User"]').textContent()).to.equal('u-live');
        expect(await firstRow.locator('td[data-label="Payload"]').textContent()).to.equal(JSON.stringify({ note: injection }));

        // Paused: no poll, so an item stored meanwhile is not shown; resumed, it is.
        const pause = page.getByRole('button', { name: 'Pause' });
        expect(await pause.getAttribute('aria-pressed')).to.equal('false');
        await pause.click();
        const resume = page.getByRole('button', { name: 'Resume' });
        expect(await resume.getAttribute('aria-pressed')).to.equal('true');
        const whilePaused = await postEvent(account, 'WhilePaused');
        await untilIndexed(account, whilePaused);
        const polled = await page.waitForRequest((request) => request.url().includes('/live?'), { timeout: 1_500 }).then(
          () => true,
          () => false,
        );
        expect(polled, 'a poll while paused').to.equal(false);
        expect(await liveRow(page, whilePaused).count()).to.equal(0);
        await resume.click();
        await liveRow(page, whilePaused).waitFor({ timeout: 2_000 });

        // The kind filter: users only, then all again.
        const user = queued(await app.ingest(account, 'users', { userId: `u-${width}`, attributes: {} }));
        await untilIndexed(account, user);
        await page.getByLabel('Kind').selectOption('users');
        await liveRow(page, user).waitFor({ timeout: 2_000 });
        expect(await liveRow(page, first).count()).to.equal(0);
        for (const item of await bodyRows.locator('td[data-label="Item"]').allTextContents()) expect(item).to.equal('profile');
        await page.getByLabel('Kind').selectOption('');
        await liveRow(page, first).waitFor();

        // By event name, then by user: only what matches, newer matches still coming in (within
        // 2 s of their indexing, as above).
        await page.getByLabel('Event name').fill(`Clicked at ${width}`);
        await page.getByRole('button', { name: 'Filter' }).click();
        // The filtered list replaces the whole list: the first event goes, the second stays.
        await liveRow(page, first).waitFor({ state: 'detached' });
        await liveRow(page, second).waitFor();
        const clickedAgain = await postEvent(account, `Clicked at ${width}`);
        await untilIndexed(account, clickedAgain);
        await liveRow(page, clickedAgain).waitFor({ timeout: 2_000 });
        expect(await bodyRows.count()).to.equal(2);
        await page.getByLabel('Event name').fill('');
        await page.getByLabel('User').fill(`u-${width}`);
        await page.getByRole('button', { name: 'Filter' }).click();
        await liveRow(page, second).waitFor({ state: 'detached' });
        await liveRow(page, user).waitFor();
        expect(await bodyRows.count()).to.equal(1);
        await page.getByRole('button', { name: 'Clear' }).click();
        await liveRow(page, first).waitFor();

        // Another account's items are never listed.
        expect(await liveRow(page, foreign).count()).to.equal(0);

        // A row opens its stored JSON, from the keyboard too; the panel takes the focus. The client's value is text, nothing runs.
        const open = page.getByRole('button', { name: `Show the stored JSON of ${first}` });
        await open.focus();
        await page.keyboard.press('Enter');
        expect(await open.getAttribute('aria-expanded')).to.equal('true');
        const panel = page.getByRole('complementary', { name: 'Stored JSON' });
        await panel.waitFor();
        expect(await page.evaluate('document.activeElement.id')).to.equal('stored-json-heading');
        await panel.getByRole('heading', { name: /Stored event of trackID/ }).waitFor();
        expect(await panel.textContent()).to.include(first);
        const data = panel.getByLabel('data of EventTracked', { exact: true });
        expect(JSON.parse((await data.textContent()) ?? '')).to.deep.include({ eventName: 'Viewed', eventData: { note: injection } });
        expect(await panel.getByLabel('metadata of EventTracked').textContent()).to.include('receivedAt');
        expect(await page.locator('img').count()).to.equal(0);
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        await screenshot(page, `live-events-${width}`);

        // Its link leads to the track lookup of that trackID.
        await panel.getByRole('link', { name: `Open trackID ${first} in the track lookup` }).click();
        await page.getByRole('heading', { name: /Stored event of trackID/ }).waitFor();
        expect(new URL(page.url()).pathname).to.equal(`/dashboard/track/${first}`);
        expect(dialogs).to.deep.equal([]);
        watched.expectNoProblems();
      } finally {
        await watched.close();
      }
    });
  }

  for (const width of [1280, 400]) {
    it(`looks a trackID up, typed in or from the URL, with its streams, at ${width} px`, async () => {
      const unknown = randomUUID();
      const foreign = await postEvent(other, 'Foreign');
      const trackPath = (id: string) => `/admin/v1/accounts/${account.licenseCode}/track/${id}`;
      const watched = await openPage(browser, { width, expectedFailedLoads: [...signInFailedLoads, trackPath(unknown), trackPath(foreign)] });
      const { page } = watched;
      const dialogs: string[] = [];
      failOnDialog(page, dialogs);
      const requests: string[] = [];
      page.on('request', (request) => requests.push(new URL(request.url()).pathname));
      try {
        const userId = `twice-${width}`;
        queued(await app.ingest(account, 'users', { userId, attributes: { note: injection } }));
        const again = queued(await app.ingest(account, 'users', { userId, attributes: { note: 'again' } }));
        const event = await postEvent(account, 'Looked', { note: injection });
        await untilIndexed(account, again);
        await untilIndexed(account, event);

        await signInAsAccount(page, app.baseUrl, account, '/dashboard/track');
        await page.getByRole('heading', { name: 'Track lookup' }).waitFor();
        const input = page.getByLabel('trackID', { exact: true });

        // Not a UUID: told at once, nothing asked of the server.
        await input.fill('not-a-trackid');
        await page.getByRole('button', { name: 'Look up' }).click();
        expect(await page.getByRole('alert').textContent()).to.include('"not-a-trackid" is not a trackID');
        expect(requests.filter((path) => path.includes('/track/'))).to.deep.equal([]);

        // Typed in: the URL follows, the event is shown with its data as text.
        await input.fill(event);
        await page.getByRole('button', { name: 'Look up' }).click();
        await page.getByRole('heading', { name: `Stored event of trackID ${event}` }).waitFor();
        expect(new URL(page.url()).pathname).to.equal(`/dashboard/track/${event}`);
        const stored = page.getByRole('article', { name: /EventTracked in / });
        expect(await stored.textContent()).to.include('Stream position').and.include('Global position');
        expect(await stored.getByLabel('data of EventTracked', { exact: true }).textContent()).to.include(injection);
        expect(await page.locator('img').count()).to.equal(0);

        // From the URL: a user sent twice, at stream positions 0 and 1, the second one this trackID's.
        await page.goto(`${app.baseUrl}/dashboard/track/${again}`);
        await page.getByRole('heading', { name: `Stored event of trackID ${again}` }).waitFor();
        const stream = page.getByRole('table').filter({ hasText: 'Stream position' }).last();
        const rows = stream.locator('tbody tr');
        expect(await rows.count()).to.equal(2);
        const cells = async (index: number) => (await rows.nth(index).locator('td').allTextContents()).slice(0, 3);
        expect((await cells(0))[0]).to.equal('0');
        expect((await cells(1))[0]).to.equal('1');
        expect(await rows.nth(0).locator('td').nth(4).textContent()).to.equal('');
        expect(await rows.nth(1).locator('td').nth(4).textContent()).to.equal('yes');
        expect(await page.getByLabel('trackID', { exact: true }).inputValue()).to.equal(again);
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        await screenshot(page, `track-lookup-${width}`);

        // Unknown, and another account's: the same "unknown trackID".
        for (const missing of [unknown, foreign]) {
          await input.fill(missing);
          await page.getByRole('button', { name: 'Look up' }).click();
          await page.getByRole('alert').filter({ hasText: 'unknown trackID' }).filter({ hasText: missing }).waitFor();
        }
        await screenshot(page, `track-lookup-unknown-${width}`);
        expect(dialogs).to.deep.equal([]);
        watched.expectNoProblems();
      } finally {
        await watched.close();
      }
    });
  }
  it('shows a large payload truncated in the track lookup, as text, and loads it in full on request', async () => {
    const watched = await openPage(browser, { width: 1280, expectedFailedLoads: signInFailedLoads });
    const { page } = watched;
    const dialogs: string[] = [];
    failOnDialog(page, dialogs);
    try {
      // Over 4 KiB of JSON: the lookup leaves it out of its list, with its size and start.
      const large = `${injection}${'z'.repeat(6000)}`;
      const trackID = await postEvent(account, 'Large', { large });
      await untilIndexed(account, trackID);
      await signInAsAccount(page, app.baseUrl, account, `/dashboard/track/${trackID}`);
      await page.getByRole('heading', { name: `Stored event of trackID ${trackID}` }).waitFor();
      const stored = page.getByRole('article', { name: /EventTracked in / });
      expect(await stored.textContent()).to.include('Truncated:').and.include('bytes of JSON');
      expect(await stored.locator('pre.excerpt').first().textContent()).to.include(injection);
      await stored.getByRole('button', { name: 'Load the full data of EventTracked' }).click();
      const full = stored.getByLabel('data of EventTracked', { exact: true });
      await full.waitFor();
      expect((JSON.parse((await full.textContent()) ?? '{}') as { eventData: { large: string } }).eventData.large).to.equal(large);
      expect(await page.locator('img').count()).to.equal(0);
      expect(dialogs).to.deep.equal([]);
      watched.expectNoProblems();
    } finally {
      await watched.close();
    }
  });
});
