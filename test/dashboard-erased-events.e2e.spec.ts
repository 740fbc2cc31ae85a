import { expect } from 'chai';
import type { Browser, Locator, Page } from 'playwright-core';
import type { TimelinePage } from '../projections/leads/timeline.js';
import type { Erasure } from '../src/erasure/requests.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { openPage, screenshot, usesBrowser } from './support/browser.js';
import { signInAsAccount, signInFailedLoads } from './support/dashboard-session.js';
import { eventually } from './support/eventually.js';
import { queued } from './support/replies.js';

/**
 * What the dashboard shows of an erased person's events, against the real service and its erasure
 * runner: an anonymous id merged into a user, then erased alone (its events stay in the user's
 * timeline), shown as erased with the erasure's id and time in the timeline and the track lookup;
 * and the Erasures page naming the access token that asked by its label.
 */
const zone = 'America/Los_Angeles';
/** Every instant of the dashboard: `2026-11-23 06:22:38 UTC`, whatever the browser's zone. */
const utcInstant = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/;
/** A token label is what its owner typed: shown as text, never markup. */
const label = 'Privacy desk <img src=x onerror=alert(1)>';
const secretEvent = 'Viewed secret-pricing-4711';

const cell = (row: Locator, name: string): Locator => row.locator(`td[data-label="${name}"]`);

async function fitsAt(page: Page, width: number, name: string): Promise<void> {
  await page.setViewportSize({ width, height: 900 });
  const past = `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.scroll-box, .table-box, pre')).map((e) => e.tagName + '.' + e.className).join(' ')`;
  expect(await page.evaluate(past), 'elements past the right edge').to.equal('');
  await screenshot(page, `${name}-${width}`);
}

/** The erasure note of `within`: its text and its time, checked against the erasure. */
async function expectErasedNote(within: Locator, erasure: Erasure, erasedAt: string): Promise<void> {
  const note = within.locator('.erased-note');
  const time = note.locator('time');
  expect(await time.textContent()).to.match(utcInstant);
  expect(await time.getAttribute('datetime')).to.equal(new Date(erasedAt).toISOString());
  expect(await time.getAttribute('title')).to.contain(zone);
  expect(await note.textContent()).to.match(new RegExp(`^Erased by erasure ${erasure.id} at ${(await time.textContent()) ?? ''}`));
}

describe('dashboard: erased events and who asked for an erasure (e2e)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let account: Credentials;
  let browser: Browser;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });
  usesBrowser((launched) => (browser = launched));

  const bearer = () => `Bearer ${account.accessToken}`;
  const base = () => `/admin/v1/accounts/${account.licenseCode}`;
  let erasure: Erasure;
  /** When the erasure made the visitor's events unreadable, as the track lookup says. */
  let erasedAt: string;
  let token: { id: string; accessToken: string };
  /** trackIDs: the anonymous visitor's profile and event (erased), the user's event (kept). */
  const tracked = { anonymousProfile: '', anonymousEvent: '', userEvent: '' };

  before(async () => {
    const trackIdOf = async (endpoint: string, body: unknown): Promise<string> => {
      const reply = await app.ingest<{ response: { status: string; trackID: string } }>(account, endpoint, body);
      queued(reply);
      return reply.body.response.trackID;
    };
    tracked.anonymousProfile = await trackIdOf('users', { anonymousId: 'visitor-erase-1', attributes: { plan: 'trial' } });
    tracked.anonymousEvent = await trackIdOf('events', { anonymousId: 'visitor-erase-1', eventName: secretEvent, eventData: { page: '/secret' } });
    await trackIdOf('users', { userId: 'u-keeps', anonymousId: 'visitor-erase-1', firstName: 'Kim', attributes: {} });
    tracked.userEvent = await trackIdOf('events', { userId: 'u-keeps', eventName: 'Bought', eventData: { sku: 'p-1' } });
    await app.projected();

    const made = await app.request<{ id: string; accessToken: string }>('POST', `${base()}/tokens`, { label, scope: 'ingest+read' }, { authorization: bearer() });
    expect(made.status, JSON.stringify(made.body)).to.equal(201);
    token = made.body;
    // The anonymous id alone, with the new token: the user stays, their timeline keeps the erased entries.
    const path = `/v1/accounts/${account.licenseCode}/erasures`;
    const requested = await app.request<Erasure>('POST', path, { anonymousId: 'visitor-erase-1' }, { authorization: `Bearer ${token.accessToken}` });
    expect(requested.status, JSON.stringify(requested.body)).to.equal(202);
    expect(requested.body.requestedByToken).to.deep.equal({ id: token.id, label, revokedAt: null });
    erasure = await eventually(
      async () => {
        const reply = await app.get<Erasure>(`${path}/${requested.body.id}`, bearer());
        return reply.body.state === 'done' ? reply.body : undefined;
      },
      150_000,
      () => `erasure ${requested.body.id} never finished`,
    );
    await app.projected();
    const lookup = await app.get<{ events: { erasedBy?: { erasureId: string; erasedAt: string } }[] }>(`${base()}/track/${tracked.anonymousEvent}`, bearer());
    expect(lookup.body.events[0]?.erasedBy?.erasureId).to.equal(erasure.id);
    erasedAt = lookup.body.events[0]?.erasedBy?.erasedAt ?? '';
  });

  it('API: the erasure names its token by label; the timeline keeps the erased entries, marked with the erasure, without what was sent', async () => {
    expect(erasure.requestedBy).to.equal(`access token ${token.id}`);
    expect(erasure.requestedByToken).to.deep.equal({ id: token.id, label, revokedAt: null });
    const listed = await app.get<{ erasures: Erasure[] }>(`/v1/accounts/${account.licenseCode}/erasures`, bearer());
    expect(listed.body.erasures.find((one) => one.id === erasure.id)?.requestedByToken).to.deep.equal({ id: token.id, label, revokedAt: null });

    const { entries } = (await app.get<TimelinePage>(`${base()}/leads/u-keeps/timeline`, bearer())).body;
    const byTrackId = (trackID: string) => entries.filter((entry) => entry.trackID === trackID);
    const [profile] = byTrackId(tracked.anonymousProfile);
    const [event] = byTrackId(tracked.anonymousEvent);
    const erasedBy = { erasureId: erasure.id, erasedAt };
    expect(Date.parse(erasedAt)).to.be.within(Date.parse(erasure.requestedAt), Date.parse(erasure.doneAt ?? ''));
    expect(profile).to.deep.include({ kind: 'profile', eventType: 'UserUpserted', erasedBy });
    expect(profile).not.to.have.any.keys('anonymousId', 'userId');
    expect(event).to.deep.include({ kind: 'event', eventName: null, eventTime: null, eventData: null, erasedBy });
    expect(event?.kind === 'event' && event.eventTimeUtc).to.be.a('string');
    // The user's own entries stay as they were.
    expect(byTrackId(tracked.userEvent)[0]).to.deep.include({ kind: 'event', eventName: 'Bought', eventData: { sku: 'p-1' } }).and.not.have.key('erasedBy');
    // The merge itself reads as erased with the anonymous id (sealed with its key): the lead lists it no more.
    const erasedEntries = entries.filter((entry) => entry.erasedBy);
    expect(erasedEntries.map((entry) => (entry.kind === 'profile' ? entry.eventType : 'event')).toSorted()).to.deep.equal(['ProfilesMerged', 'UserUpserted', 'event']);
    expect(JSON.stringify(entries)).not.to.contain(secretEvent);
  });

  it('shows the erased entries on the lead timeline and in the track lookup as erased, with the erasure id and time', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { timezoneId: zone, expectedFailedLoads: signInFailedLoads });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/leads/u-keeps');
      await page.getByRole('heading', { name: 'Lead u-keeps' }).waitFor();
      const timeline = page.getByRole('region', { name: 'Timeline', exact: true });
      const rowOf = (trackID: string) => timeline.getByRole('row').filter({ has: page.getByRole('link', { name: trackID }) });
      const event = rowOf(tracked.anonymousEvent);
      await event.waitFor();
      expect(await cell(event, 'What').textContent()).to.equal('Event erased');
      await expectErasedNote(cell(event, 'Details'), erasure, erasedAt);
      const profile = rowOf(tracked.anonymousProfile);
      expect(await cell(profile, 'What').textContent()).to.equal('Profile sent erased');
      await expectErasedNote(cell(profile, 'Details'), erasure, erasedAt);
      expect(await cell(rowOf(tracked.userEvent), 'What').textContent()).to.equal('Event Bought');
      expect(await cell(rowOf(tracked.userEvent), 'Details').locator('.erased-note').count()).to.equal(0);
      expect(await timeline.textContent()).not.to.contain(secretEvent);
      await fitsAt(page, 1280, 'erased-timeline');
      await fitsAt(page, 400, 'erased-timeline');
      await page.setViewportSize({ width: 1280, height: 900 });

      // Its trackID leads to the track lookup: erased, by whom and when, instead of an empty data block.
      await event.getByRole('link', { name: tracked.anonymousEvent }).click();
      await page.getByRole('heading', { name: `Stored event of trackID ${tracked.anonymousEvent}` }).waitFor();
      const stored = page.locator('article.stored-event');
      await expectErasedNote(stored, erasure, erasedAt);
      expect(await stored.locator('p.erased-note').textContent()).to.contain('What the person sent can no longer be read');
      expect(await stored.getByLabel('data of EventTracked', { exact: true }).count(), 'no data block of empty fields').to.equal(0);
      const remains = await stored.getByLabel('what remains readable of the data of EventTracked').textContent();
      expect(JSON.parse(remains ?? '')).to.have.all.keys('anonymousRef', 'eventTimeUtc');
      expect(await stored.locator('.json-label').first().textContent()).to.equal('data: erased, what remains readable');
      // In the stream's table too: the anonymous profile and the event, each erased.
      const streamRows = page.locator('section.stream tbody tr');
      expect(await streamRows.count()).to.equal(2);
      for (const row of await streamRows.all()) {
        expect(await cell(row, 'Type').textContent()).to.match(/^(UserUpserted|EventTracked) erased$/);
        await expectErasedNote(cell(row, 'Data'), erasure, erasedAt);
      }
      await fitsAt(page, 1280, 'erased-track-lookup');
      await fitsAt(page, 400, 'erased-track-lookup');
      expectNoProblems();
    } finally {
      await close();
    }
  });

  it('names the access token that asked for an erasure by its label, as text, and says when it was revoked', async () => {
    const { page, expectNoProblems, close } = await openPage(browser, { timezoneId: zone, expectedFailedLoads: signInFailedLoads });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    try {
      await signInAsAccount(page, app.baseUrl, account, '/dashboard/erasures');
      const row = page.locator(`tr[data-erasure="${erasure.id}"]`);
      const by = cell(row, 'Requested').locator('.by');
      await by.waitFor();
      expect(await by.textContent()).to.equal(`by access token “${label}”`);
      expect(await by.getAttribute('title')).to.equal(`access token ${token.id}`);
      // Done: the id is gone, its pseudonym in its place.
      expect(await cell(row, 'Person').textContent()).to.equal(`anonymousId erased, pseudonym ${erasure.anonymousRef ?? ''}`);
      expect(await page.locator('main img').count()).to.equal(0);
      await fitsAt(page, 1280, 'erasure-by-token');
      await fitsAt(page, 400, 'erasure-by-token');

      // Revoked since: still named by its label, and said to be revoked.
      expect((await app.request('DELETE', `${base()}/tokens/${token.id}`, undefined, { authorization: bearer() })).status).to.equal(204);
      const reply = await app.get<Erasure>(`/v1/accounts/${account.licenseCode}/erasures/${erasure.id}`, bearer());
      expect(reply.body.requestedByToken).to.include({ id: token.id, label }).and.have.property('revokedAt').that.is.a('string');
      await page.reload();
      await by.getByText('(revoked)').waitFor();
      expect(await by.textContent()).to.equal(`by access token “${label}” (revoked)`);
      expect(dialogs).to.deep.equal([]);
      expectNoProblems();
    } finally {
      await close();
    }
  });
});
