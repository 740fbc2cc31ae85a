import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { accountRefs } from './support/id-refs.js';
import { queued } from './support/replies.js';

/**
 * The track lookup of an event id stored twice (EventStoreDB may: docs/eventstoredb.md): the copy is
 * inserted as that store keeps a repeat it no longer recognises, at the next position of the stream.
 */
describe('dashboard track lookup of an event id stored twice (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { projections: true });
  usesBrowser((launched) => (browser = launched));

  it('shows the event once, with where its later copy is stored, as text', async () => {
    const first = queued(await app.ingest(account, 'users', { userId: 'u-twice', firstName: 'Ann', attributes: {} }));
    queued(await app.ingest(account, 'users', { userId: 'u-twice', firstName: 'Anna', attributes: {} }));
    await app.pool.query('ALTER TABLE events DROP CONSTRAINT events_event_id_key');
    await app.pool.query(
      `INSERT INTO events (stream_name, stream_position, event_id, event_type, data, metadata)
       SELECT stream_name, stream_position + 2, event_id, event_type, data, metadata FROM events WHERE event_id = $1`,
      [first],
    );
    await app.projected();

    const watched = await openPage(browser, { width: 1280, expectedFailedLoads: signInFailedLoads });
    const { page } = watched;
    try {
      await signInAsAccount(page, app.baseUrl, account, `/dashboard/track/${first}`);
      await page.getByRole('heading', { name: `Stored event of trackID ${first}` }).waitFor();
      const stored = page.getByRole('article', { name: /UserUpserted in / });
      expect(await stored.count()).to.equal(1);
      const copy = await stored.locator('dd.also-stored-at').textContent();
      const refs = await accountRefs(app, account);
      const stream = `user-${refs.accountId}-${refs.user('u-twice')}`;
      expect(copy).to.match(new RegExp(`^stream ${stream}, position 2, global position \\d+, recorded .+ \\(later copies of the same event id, counted once\\)$`));
      const rows = page.getByRole('table').filter({ hasText: 'Stream position' }).last().locator('tbody tr');
      expect(await rows.count()).to.equal(1);
      expect(await rows.nth(0).locator('td').nth(2).textContent()).to.equal('UserUpserted (also stored at 2)');
      await screenshot(page, 'track-lookup-repeat');
      watched.expectNoProblems();
    } finally {
      await watched.close();
    }
  });
});
