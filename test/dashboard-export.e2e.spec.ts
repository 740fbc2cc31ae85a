import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { expect } from 'chai';
import { parquetReadObjects } from 'hyparquet';
import type { Browser, Locator, Page } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { queued } from './support/replies.js';

/**
 * The downloads of Live events: plain links to the account's export with the filters the page
 * applied, saved by the browser itself, holding exactly what those filters select.
 */

/** One line of an NDJSON export, the fields these checks look at. */
interface ExportedLine {
  cursor: string;
  eventId: string;
  trackID: string;
  kind: string;
  eventType: string;
  receivedAt: string;
  data: { eventName?: string; userId?: string; anonymousId?: string; eventData?: unknown };
  erased: unknown;
}

/** The columns of an export of kind events (docs/export.md, CSV), in their order. */
const eventsColumns = 'event_id,track_id,received_at,event_time,event_time_utc,user_id,anonymous_id,event_name,event_data,erasure_id,erased_at,cursor';

/** Characters a query string must escape, and markup that must stay text. */
const awkwardName = 'Paid & #1 + 100% <img src=x onerror=alert(1)>';

describe('dashboard live events: downloads of the filtered export (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));
  before(async () => {
    other = await app.account('Globex');
  });

  /** Clicks `link` and returns the file the browser saved, with the name it was given. */
  async function download(page: Page, link: Locator): Promise<{ name: string; text: string; bytes: Buffer; url: string }> {
    const [saved] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(await saved.failure(), 'download failure').to.equal(null);
    const bytes = await readFile(await saved.path());
    return { name: saved.suggestedFilename(), text: bytes.toString('utf8'), bytes, url: saved.url() };
  }
  const ndjsonLines = (text: string): ExportedLine[] => {
    expect(text.endsWith('\n'), 'ends with a line break').to.equal(true);
    return text
      .slice(0, -1)
      .split('\n')
      .map((line) => JSON.parse(line) as ExportedLine);
  };

  for (const width of [1280, 400]) {
    it(`downloads NDJSON and, once a kind is chosen, CSV and Parquet of exactly what the applied filters select at ${width} px`, async () => {
      const person = `u/ü ?x=${width}&y`;
      const post = async (who: Credentials, endpoint: string, body: unknown) => queued(await app.ingest(who, endpoint, body));
      // Selected by name and user: an event naming the person by userId, one by anonymousId, and a
      // product event (until a kind is chosen).
      const byUserId = await post(account, 'events', { userId: person, eventName: awkwardName, eventData: { note: 'a, "quoted"\nvalue' } });
      const byAnonymousId = await post(account, 'events', { anonymousId: person, eventName: awkwardName, eventData: {} });
      const productEvent = await post(account, 'productsevents', { productId: 'sku-1', userId: person, eventName: awkwardName, eventData: {} });
      // Left out: another name, another person, a profile (no name), and another account's event.
      await post(account, 'events', { userId: person, eventName: 'Viewed', eventData: {} });
      await post(account, 'events', { userId: `someone-else-${width}`, eventName: awkwardName, eventData: {} });
      await post(account, 'users', { userId: person, attributes: {} });
      const foreign = await post(other, 'events', { userId: person, eventName: awkwardName, eventData: {} });
      await app.projected();

      const watched = await openPage(browser, { width, expectedFailedLoads: signInFailedLoads });
      const { page } = watched;
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      try {
        await signInAsAccount(page, app.baseUrl, account, '/dashboard/live');
        await page.getByRole('heading', { name: 'Live events' }).waitFor();
        const ndjsonLink = page.getByRole('link', { name: 'Download NDJSON' });
        const csvLink = page.getByRole('link', { name: 'Download CSV' });

        // No kind chosen: NDJSON of every kind, and CSV waits for a kind.
        await ndjsonLink.waitFor();
        expect(await csvLink.count()).to.equal(0);
        expect(await page.locator('.live-export').textContent()).to.include('CSV and Parquet: choose a kind first');

        await page.getByLabel('Event name').fill(awkwardName);
        await page.getByLabel('User').fill(person);
        await page.getByRole('button', { name: 'Filter' }).click();
        const listed = page.locator('table.live-table tbody tr');
        await listed.filter({ hasText: productEvent }).waitFor();
        // What is typed but not applied changes no download.
        await page.getByLabel('Event name').fill('Viewed');

        // The filters travel encoded, each as itself.
        const query = new URL((await ndjsonLink.getAttribute('href')) ?? '', app.baseUrl).searchParams;
        expect([...query.entries()]).to.deep.equal([
          ['format', 'ndjson'],
          ['name', awkwardName],
          ['user', person],
        ]);

        const all = await download(page, ndjsonLink);
        expect(all.name).to.equal('events.ndjson');
        expect(new URL(all.url).pathname).to.equal(`/admin/v1/accounts/${account.licenseCode}/export`);
        const allLines = ndjsonLines(all.text);
        expect(allLines.map((line) => line.trackID)).to.deep.equal([byUserId, byAnonymousId, productEvent]);
        expect(allLines.map((line) => line.kind)).to.deep.equal(['events', 'events', 'productsevents']);
        for (const line of allLines) expect(line.data.eventName).to.equal(awkwardName);
        expect(allLines[0]?.data).to.deep.include({ userId: person, eventData: { note: 'a, "quoted"\nvalue' } });
        expect(allLines[1]?.data).to.deep.include({ anonymousId: person });
        expect(all.text).not.to.include(foreign);
        // What the page lists is what was downloaded.
        expect(await listed.count()).to.equal(3);
        await page.getByLabel('Event name').fill(awkwardName);
        await screenshot(page, `live-events-export-any-kind-${width}`);

        // A kind chosen: both downloads hold that kind only.
        await page.getByLabel('Kind').selectOption('events');
        await listed.filter({ hasText: productEvent }).waitFor({ state: 'detached' });
        await listed.filter({ hasText: byUserId }).waitFor();
        const events = await download(page, ndjsonLink);
        expect(ndjsonLines(events.text).map((line) => line.trackID)).to.deep.equal([byUserId, byAnonymousId]);

        const csv = await download(page, csvLink);
        expect(csv.name).to.equal('events-events.csv');
        expect(csv.text.split('\n')[0]).to.equal(eventsColumns);
        const [header, ...rows] = parse(csv.text) as string[][];
        const column = (name: string) => (header ?? []).indexOf(name);
        expect(rows.map((row) => row[column('track_id')])).to.deep.equal([byUserId, byAnonymousId]);
        expect(rows.map((row) => row[column('event_name')])).to.deep.equal([awkwardName, awkwardName]);
        expect(rows.map((row) => [row[column('user_id')], row[column('anonymous_id')]])).to.deep.equal([
          [person, ''],
          ['', person],
        ]);
        expect(JSON.parse(rows[0]?.[column('event_data')] ?? '')).to.deep.equal({ note: 'a, "quoted"\nvalue' });
        expect(csv.text).not.to.include(foreign);
        const parquet = await download(page, page.getByRole('link', { name: 'Download Parquet' }));
        expect(parquet.name).to.equal('events-events.parquet');
        const file = parquet.bytes.buffer.slice(parquet.bytes.byteOffset, parquet.bytes.byteOffset + parquet.bytes.byteLength) as ArrayBuffer;
        const parquetRows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
        expect(parquetRows.map((row) => [row.track_id, row.event_name])).to.deep.equal([
          [byUserId, awkwardName],
          [byAnonymousId, awkwardName],
        ]);

        // The filter text stays text; the page keeps within its width.
        expect(await page.locator('img').count()).to.equal(0);
        expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(width);
        await screenshot(page, `live-events-export-${width}`);
        expect(dialogs).to.deep.equal([]);
        watched.expectNoProblems();
      } finally {
        await watched.close();
      }
    });
  }

  it("refuses another account's session the export, and no session at all", async () => {
    const mine = queued(await app.ingest(account, 'events', { userId: 'u-private', eventName: 'Private', eventData: {} }));
    const exportUrl = `${app.baseUrl}/admin/v1/accounts/${account.licenseCode}/export?format=ndjson`;
    const watched = await openPage(browser, { width: 1280, expectedFailedLoads: signInFailedLoads });
    const { page } = watched;
    try {
      await signInAsAccount(page, app.baseUrl, other, '/dashboard/live');
      await page.getByRole('heading', { name: 'Live events' }).waitFor();
      // The other account's own link names its own account.
      const own = new URL((await page.getByRole('link', { name: 'Download NDJSON' }).getAttribute('href')) ?? '', app.baseUrl);
      expect(own.pathname).to.equal(`/admin/v1/accounts/${other.licenseCode}/export`);

      // Its session cookie, sent to the first account's export (the browser context's own requests).
      const refused = await page.request.get(exportUrl);
      expect(refused.status()).to.equal(403);
      expect(refused.headers()['content-disposition']).to.equal(undefined);
      const body = await refused.text();
      expect((JSON.parse(body) as { error: string }).error).to.equal('this session belongs to another account');
      expect(body).not.to.include(mine);
      watched.expectNoProblems();
    } finally {
      await watched.close();
    }
    const anonymous = await app.get<{ error: string }>(`/admin/v1/accounts/${account.licenseCode}/export`);
    expect(anonymous.status).to.equal(401);
  });
});
