import { expect } from 'chai';
import { servedApp, type Credentials, type Reply, type TestApp } from '../support/app.js';
import { queued, uuidPattern } from '../support/replies.js';

/**
 * The Leads section of docs/api.md through HTTP, with the projection workers running: the list
 * with `kind`, `q` and paging, a lead's events and timeline with their trackIDs, one account never
 * seeing another's leads.
 */

interface LeadBody {
  userId: string | null;
  anonymousId: string | null;
  anonymousIds: string[];
  attributes: Record<string, unknown>;
  attributeTypes: Record<string, string>;
}

interface Page {
  leads: LeadBody[];
  nextCursor: string | null;
}

type Entry = Record<string, unknown> & { kind: string; at: string; trackID: string };

function read<T>(app: TestApp, account: Credentials, path: string): Promise<Reply<T>> {
  return app.get<T>(`/admin/v1/accounts/${account.licenseCode}${path}`, `Bearer ${account.accessToken}`);
}

async function ok<T>(app: TestApp, account: Credentials, path: string): Promise<T> {
  const reply = await read<T>(app, account, path);
  expect(reply.status, `${path}: ${JSON.stringify(reply.body)}`).to.equal(200);
  return reply.body;
}

/** Ids of the leads of every page of a listing, following nextCursor. */
async function allPages(app: TestApp, account: Credentials, query: string): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page: Page = await ok<Page>(app, account, `/leads?${query}${cursor ? `&cursor=${cursor}` : ''}`);
    pages.push(page.leads.map((l) => (l.userId ?? l.anonymousId) as string));
    cursor = page.nextCursor;
  } while (cursor !== null && pages.length < 100);
  return pages;
}

const ids = async (app: TestApp, account: Credentials, query: string): Promise<string[]> => (await allPages(app, account, query)).flat();

describe('leads read API', function () {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  describe('list', () => {
    beforeEach(async () => {
      queued(await app.ingest(account, 'users', { userId: 'u-ann', firstName: 'Ann', lastName: 'Smith', email: 'ann.smith@example.com', attributes: {} }));
      queued(await app.ingest(account, 'users', { anonymousId: 'anon-1', attributes: {} }));
      queued(await app.ingest(account, 'users', { userId: 'u-bob', firstName: 'Bob', lastName: 'Smithers', email: 'bob@mail.test', attributes: {} }));
      queued(await app.ingest(account, 'users', { anonymousId: 'anon-2', attributes: {} }));
      queued(await app.ingest(account, 'users', { userId: 'u-cy', firstName: 'Cy', lastName: 'Jones', email: 'cy_100%@mail.test', attributes: {} }));
      // Merged: listed under u-ann (by anonymousIds), not on its own.
      queued(await app.ingest(account, 'users', { anonymousId: 'anon-merged', attributes: {} }));
      queued(await app.ingest(account, 'users', { userId: 'u-ann', anonymousId: 'anon-merged', attributes: {} }));
      await app.projected();
    });

    it('kind=known gives the leads with a userId and kind=anonymous the others, newest first, merged ones left out', async () => {
      expect(await ids(app, account, 'kind=known')).to.deep.equal(['u-cy', 'u-bob', 'u-ann']);
      expect(await ids(app, account, 'kind=anonymous')).to.deep.equal(['anon-2', 'anon-1']);
      expect(await ids(app, account, '')).to.deep.equal(['u-cy', 'anon-2', 'u-bob', 'anon-1', 'u-ann']);
    });

    it('pages through each kind with limit and cursor, each lead once', async () => {
      expect(await allPages(app, account, 'kind=known&limit=2')).to.deep.equal([['u-cy', 'u-bob'], ['u-ann']]);
      expect(await allPages(app, account, 'kind=anonymous&limit=1')).to.deep.equal([['anon-2'], ['anon-1']]);
      expect(await allPages(app, account, 'limit=2')).to.deep.equal([['u-cy', 'anon-2'], ['u-bob', 'anon-1'], ['u-ann']]);
    });

    it('q finds ids, emails, names and merged anonymous ids, case-insensitively, with kind and paging', async () => {
      expect(await ids(app, account, 'q=SMITH')).to.deep.equal(['u-bob', 'u-ann']);
      expect(await allPages(app, account, 'q=smith&limit=1')).to.deep.equal([['u-bob'], ['u-ann']]);
      expect(await ids(app, account, 'q=ann.smith%40example.com')).to.deep.equal(['u-ann']);
      expect(await ids(app, account, 'q=ann%20smith')).to.deep.equal(['u-ann']);
      expect(await ids(app, account, 'q=u-bo')).to.deep.equal(['u-bob']);
      expect(await ids(app, account, 'q=anon-merged')).to.deep.equal(['u-ann']);
      expect(await ids(app, account, 'q=anon')).to.deep.equal(['anon-2', 'anon-1', 'u-ann']);
      expect(await ids(app, account, 'q=anon&kind=anonymous')).to.deep.equal(['anon-2', 'anon-1']);
      expect(await ids(app, account, 'q=anon&kind=known')).to.deep.equal(['u-ann']);
      expect(await ids(app, account, 'q=mail.test&kind=known&limit=1')).to.deep.equal(['u-cy', 'u-bob']);
      // LIKE's wildcards are taken as written.
      expect(await ids(app, account, 'q=_100%25')).to.deep.equal(['u-cy']);
      expect(await ids(app, account, 'q=%25')).to.deep.equal(['u-cy']);
      expect(await ids(app, account, 'q=nobody')).to.deep.equal([]);
    });

    it('refuses a kind other than known or anonymous, naming kind', async () => {
      for (const query of ['kind=user', 'kind=', 'kind=KNOWN', 'kind=known&kind=anonymous']) {
        const reply = await read<{ error: string; code: number }>(app, account, `/leads?${query}`);
        expect(reply.status, query).to.equal(400);
        expect(reply.body.code, query).to.equal(400);
        expect(reply.body.error, query).to.match(/kind/);
      }
    });

    it('never shows another account its leads, in the list, the search or a lead page', async () => {
      const other = await app.account('other');
      queued(await app.ingest(other, 'users', { userId: 'u-ann-other', firstName: 'Ann', lastName: 'Smith', attributes: {} }));
      queued(await app.ingest(other, 'users', { anonymousId: 'anon-other', attributes: {} }));
      await app.projected();
      expect(await ids(app, account, 'q=smith')).to.deep.equal(['u-bob', 'u-ann']);
      expect(await ids(app, account, 'kind=anonymous')).to.deep.equal(['anon-2', 'anon-1']);
      expect(await ids(app, other, '')).to.deep.equal(['anon-other', 'u-ann-other']);
      expect(await ids(app, other, 'q=bob')).to.deep.equal([]);
      expect((await read(app, other, '/leads/u-ann')).status).to.equal(404);
      expect((await read(app, other, '/leads/u-ann/timeline')).status).to.equal(404);
      expect((await read(app, other, '/leads/u-ann/events')).status).to.equal(404);
    });

    it('says how long the service took in Server-Timing', async () => {
      const reply = await read(app, account, '/leads?q=smith');
      expect(reply.headers.get('server-timing')).to.match(/^app;dur=\d+(\.\d+)?$/);
    });
  });

  describe('a lead with a merged anonymous profile', () => {
    const sent: Record<string, string> = {};
    beforeEach(async () => {
      sent.anonymousProfile = queued(await app.ingest(account, 'users', { anonymousId: 'visitor-9', email: 'v9@mail.test', attributes: { referrer: 'ad' } }));
      sent.anonymousEvent = queued(await app.ingest(account, 'events', { anonymousId: 'visitor-9', eventName: 'viewed', eventData: { page: '/pricing' } }));
      sent.merge = queued(await app.ingest(account, 'users', { userId: 'u-9', anonymousId: 'visitor-9', firstName: 'Nine', attributes: { plan: 'pro', seats: 3 } }));
      sent.knownEvent = queued(
        await app.ingest(account, 'events', { userId: 'u-9', eventName: 'bought', eventTime: '2024-05-01T12:30:00+02:00', eventData: { sku: 'A-1' } }),
      );
      await app.projected();
    });

    it('timeline: its profiles (those of the merged anonymous id too) and events, latest first, with trackIDs', async () => {
      const { entries } = await ok<{ entries: Entry[] }>(app, account, '/leads/u-9/timeline');
      const utcTimes: unknown[] = [];
      const shape = entries.map(({ at, eventId, ...rest }) => {
        expect(at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
        expect(eventId).to.match(uuidPattern);
        if (rest.kind !== 'event') return rest;
        const { eventTimeUtc, ...others } = rest;
        utcTimes.push(eventTimeUtc);
        return others;
      });
      // An event's instant: its eventTime read as UTC, or its receipt when it was sent none.
      expect(utcTimes[0]).to.equal('2024-05-01T10:30:00.000000Z');
      expect(utcTimes[1]).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(shape).to.deep.equal([
        { kind: 'event', trackID: sent.knownEvent, eventName: 'bought', eventTime: '2024-05-01T12:30:00+02:00', eventData: { sku: 'A-1' } },
        { kind: 'profile', trackID: sent.merge, eventType: 'ProfilesMerged', userId: 'u-9' },
        { kind: 'profile', trackID: sent.merge, eventType: 'UserUpserted', userId: 'u-9' },
        { kind: 'event', trackID: sent.anonymousEvent, eventName: 'viewed', eventTime: null, eventData: { page: '/pricing' } },
        { kind: 'profile', trackID: sent.anonymousProfile, eventType: 'UserUpserted', anonymousId: 'visitor-9' },
      ]);
      const ats = entries.map((e) => e.at);
      expect(ats).to.deep.equal([...ats].sort().reverse());
      // The merged anonymous id gives its known user's timeline.
      expect((await ok<{ entries: Entry[] }>(app, account, '/leads/visitor-9/timeline')).entries).to.deep.equal(entries);
    });

    it('timeline: limit keeps the latest entries and is checked', async () => {
      const { entries } = await ok<{ entries: Entry[] }>(app, account, '/leads/u-9/timeline?limit=2');
      expect(entries.map((e) => e.trackID)).to.deep.equal([sent.knownEvent, sent.merge]);
      for (const limit of ['0', '501', 'x']) expect((await read(app, account, `/leads/u-9/timeline?limit=${limit}`)).status, limit).to.equal(400);
      expect((await read(app, account, '/leads/nobody/timeline')).status).to.equal(404);
    });

    it('events: each with the trackID it was accepted under', async () => {
      const { events } = await ok<{ events: { eventName: string; trackID: string }[] }>(app, account, '/leads/u-9/events');
      expect(events.map((e) => [e.eventName, e.trackID])).to.have.deep.members([
        ['bought', sent.knownEvent],
        ['viewed', sent.anonymousEvent],
      ]);
      for (const e of events) expect(e.trackID).to.match(uuidPattern);
    });

    it('attributeTypes names the type of every custom attribute, those filled in from the merged profile too', async () => {
      const lead = await ok<LeadBody>(app, account, '/leads/u-9');
      expect(lead.anonymousIds).to.deep.equal(['visitor-9']);
      expect(Object.keys(lead.attributeTypes).sort()).to.deep.equal(Object.keys(lead.attributes).sort());
      expect(lead.attributes).to.deep.equal({ plan: 'pro', seats: 3, referrer: 'ad' });
      expect(lead.attributeTypes).to.have.all.keys('plan', 'seats', 'referrer');
    });
  });
});
