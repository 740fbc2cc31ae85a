import { expect } from 'chai';
import { adminToken, servedApp, type Credentials, type TestApp } from './support/app.js';
import { queued } from './support/replies.js';
import { replyBudgetBytes } from '../projections/reply-bytes.js';
import { describeListedEvent, planTrackLookup, readLookupPage } from '../projections/track-index/queries.js';

/** Read replies over data planted by an ingest token: 100 events of about 1 MB in one stream. */

const admin = `Bearer ${adminToken}`;
const planted = 100;
const blob = 'x'.repeat(1_000_000);
/** A reply's envelope around its page (keys, cursor) besides the items the budget counts. */
const envelope = 4096;

interface Truncated {
  bytes: number;
  excerpt: string;
}
interface ListedEvent {
  eventId: string;
  streamPosition: number;
  data: Record<string, unknown> | null;
  metadata: Record<string, unknown> | null;
  truncated?: Record<string, Truncated>;
}
interface LookupPage {
  trackID: string;
  events: ListedEvent[];
  streams: Record<string, ListedEvent[]>;
  nextCursor: string | null;
}
interface LeadEvent {
  eventId: string;
  eventData: Record<string, unknown> | null;
  truncated?: Record<string, Truncated>;
}
interface TimelineEntry {
  kind: string;
  eventId: string;
  eventData?: Record<string, unknown> | null;
  truncated?: Record<string, Truncated>;
}

/** GETs `path` and returns the reply's status, its size in bytes and its body. */
async function getSized<T>(app: TestApp, path: string, authorization: string): Promise<{ status: number; bytes: number; body: T }> {
  const response = await fetch(app.baseUrl + path, { headers: { authorization } });
  const text = await response.text();
  return { status: response.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) as T };
}

/** Every page of a paged read from `first`, following `nextCursor`; each page's size is checked against the bound. */
async function allPages<T extends { nextCursor: string | null }>(app: TestApp, first: string, authorization: string): Promise<T[]> {
  const pages: T[] = [];
  for (let path: string | null = first; path !== null; ) {
    const reply: { status: number; bytes: number; body: T } = await getSized<T>(app, path, authorization);
    expect(reply.status, JSON.stringify(reply.body).slice(0, 300)).to.equal(200);
    expect(reply.bytes).to.be.at.most(replyBudgetBytes + envelope);
    pages.push(reply.body);
    const cursor: string | null = reply.body.nextCursor;
    path = cursor === null ? null : `${first}${first.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`;
    expect(pages.length, 'pages end').to.be.below(500);
  }
  return pages;
}

describe('read replies bounded in bytes, over large events an ingest token stored (e2e)', function () {
  this.timeout(300_000);
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  let ingestOnly: string;
  let trackID: string;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });

  before(async () => {
    other = await app.account('other');
    const token = await app.request<{ accessToken: string }>('POST', `/admin/v1/accounts/${account.licenseCode}/tokens`, { label: 'shop', scope: 'ingest' }, { authorization: admin });
    expect(token.status).to.equal(201);
    ingestOnly = `Bearer ${token.body.accessToken}`;
    const post = (endpoint: string, body: unknown) => app.ingest(account, endpoint, body, { authorization: ingestOnly });
    queued(await post('users', { userId: 'big', firstName: 'Big', attributes: {} }));
    for (let i = 0; i < planted; i += 1) queued(await post('events', { userId: 'big', eventName: 'large', eventData: { blob, i } }));
    trackID = queued(await post('events', { userId: 'big', eventName: 'last', eventData: { small: true } }));
    await app.projected(120_000);
  });

  const accountPath = (path: string, of = account): string => `/admin/v1/accounts/${of.licenseCode}/${path}`;

  it('answers concurrent track lookups, lead events and timelines with pages under 1 MiB, large payloads truncated', async () => {
    const reads = ['track/' + trackID, 'leads/big/events?limit=500', 'leads/big/timeline?limit=500'].flatMap((path) => [path, path, path]);
    const replies = await Promise.all(reads.map((path) => getSized<Record<string, unknown>>(app, accountPath(path), admin)));
    for (const [i, reply] of replies.entries()) {
      expect(reply.status, reads[i]).to.equal(200);
      expect(reply.bytes, reads[i]).to.be.at.most(replyBudgetBytes + envelope);
    }
    const events = (replies[3]?.body.events ?? []) as LeadEvent[];
    expect(events.length).to.be.greaterThan(planted / 2);
    const large = events.find((e) => e.truncated);
    expect(large?.eventData).to.equal(null);
    expect(large?.truncated?.eventData?.bytes).to.be.within(blob.length, blob.length + 100);
    expect(large?.truncated?.eventData?.excerpt).to.be.a('string').with.length.within(1, 512);
    expect((await getSized(app, '/readyz', admin)).status, 'the service still answers').to.equal(200);
  });

  it('chains track lookup pages to the whole stream, and gives each truncated payload in full by its event id', async () => {
    const pages = await allPages<LookupPage>(app, accountPath(`track/${trackID}`), admin);
    const own = pages.flatMap((p) => p.events);
    expect(own.map((e) => e.data)).to.deep.equal([{ userId: 'big', eventName: 'last', eventTime: null, eventTimeUtc: own[0]?.data?.eventTimeUtc, eventData: { small: true } }]);
    const streams = pages.flatMap((p) => Object.entries(p.streams));
    const stream = streams.flatMap(([, list]) => list);
    expect(new Set(streams.map(([name]) => name)).size).to.equal(1);
    // The planted events (after the profile at position 0), then the trackID's own: the 100 before it.
    expect(stream.map((e) => e.streamPosition)).to.deep.equal(Array.from({ length: planted + 1 }, (_, i) => i + 1));
    const truncated = stream.filter((e) => e.truncated?.data);
    expect(truncated).to.have.length(planted);
    for (const event of truncated.slice(0, 3)) {
      expect(event.data).to.equal(null);
      const full = await getSized<{ eventId: string; data: { eventData: { blob: string; i: number } } }>(app, accountPath(`events/${event.eventId}`), admin);
      expect(full.status).to.equal(200);
      expect(full.body.eventId).to.equal(event.eventId);
      expect(full.body.data.eventData).to.deep.equal({ blob, i: event.streamPosition - 1 });
      expect(event.truncated?.data?.bytes).to.equal(Buffer.byteLength(JSON.stringify(full.body.data)));
      expect(JSON.stringify(full.body.data).startsWith(event.truncated?.data?.excerpt ?? '-')).to.equal(true);
    }
  });

  it("chains a lead's events and timeline over pages of 1 MiB: 300 events of 4 KB, under the truncation bound", async () => {
    const data = 'y'.repeat(3900);
    for (let round = 0; round < 3; round += 1) {
      const items = Array.from({ length: 100 }, (_, i) => ({ userId: 'mid', eventName: 'mid', eventData: { data, n: round * 100 + i } }));
      expect((await app.ingest(account, 'events/bulk', items, { authorization: ingestOnly })).status).to.equal(200);
    }
    queued(await app.ingest(account, 'users', { userId: 'mid', attributes: {} }, { authorization: ingestOnly }));
    await app.projected(120_000);
    const eventPages = await allPages<{ events: LeadEvent[]; nextCursor: string | null }>(app, accountPath('leads/mid/events?limit=500'), admin);
    expect(eventPages.length).to.be.greaterThan(1);
    const events = eventPages.flatMap((p) => p.events);
    expect(events.filter((e) => e.truncated)).to.deep.equal([]);
    expect(events.map((e) => (e.eventData as { n: number }).n).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 300 }, (_, n) => n));
    const timelinePages = await allPages<{ entries: TimelineEntry[]; nextCursor: string | null }>(app, accountPath('leads/mid/timeline?limit=500'), admin);
    expect(timelinePages.length).to.be.greaterThan(1);
    const entries = timelinePages.flatMap((p) => p.entries);
    expect(new Set(entries.filter((e) => e.kind === 'event').map((e) => e.eventId))).to.deep.equal(new Set(events.map((e) => e.eventId)));
  });

  it('chains the pages of a track lookup read with a smaller budget to the same events as one page', async () => {
    const plan = await planTrackLookup(app.pool, trackID, null);
    if (!plan) throw new Error('the trackID is not indexed');
    const whole = await readLookupPage(app.pool, app.services.store, plan, { offset: 0, budget: 2 ** 30, show: describeListedEvent });
    expect(whole.next).to.equal(null);
    const chained: unknown[] = [];
    let pages = 0;
    for (let offset: number | null = 0; offset !== null; pages += 1) {
      const page: Awaited<ReturnType<typeof readLookupPage<Record<string, unknown>>>> = await readLookupPage(app.pool, app.services.store, plan, { offset, budget: 20_000, show: describeListedEvent });
      chained.push(...page.events, ...[...page.streams.values()].flat());
      offset = page.next;
    }
    expect(pages).to.be.greaterThan(3);
    expect(chained).to.deep.equal([...whole.events, ...[...whole.streams.values()].flat()]);
  });

  it("chains a lead's events and timeline to all of them; the full payload is its account's alone", async () => {
    const eventPages = await allPages<{ events: LeadEvent[]; nextCursor: string | null }>(app, accountPath('leads/big/events?limit=500'), admin);
    const events = eventPages.flatMap((p) => p.events);
    expect(events).to.have.length(planted + 1);
    expect(new Set(events.map((e) => e.eventId)).size).to.equal(planted + 1);
    const timelinePages = await allPages<{ entries: TimelineEntry[]; nextCursor: string | null }>(app, accountPath('leads/big/timeline?limit=500'), admin);
    const entries = timelinePages.flatMap((p) => p.entries);
    expect(entries.map((e) => e.kind).filter((k) => k === 'event')).to.have.length(planted + 1);
    expect(entries.map((e) => e.eventId)).to.include.members(events.map((e) => e.eventId));

    const large = events.find((e) => e.truncated) as LeadEvent;
    const path = `events/${large.eventId}`;
    const own = await getSized<{ data: { eventData: unknown } }>(app, accountPath(path), `Bearer ${account.accessToken}`);
    expect(own.status).to.equal(200);
    expect((own.body.data.eventData as { blob: string }).blob).to.equal(blob);
    expect((await getSized(app, accountPath(path, other), `Bearer ${other.accessToken}`)).status, "another account's own path").to.equal(404);
    expect((await getSized(app, accountPath(path, other), admin)).status, 'an operator under another account').to.equal(404);
    expect((await getSized(app, accountPath(path), `Bearer ${other.accessToken}`)).status, "another account's token").to.equal(401);
    expect((await getSized(app, accountPath(path), ingestOnly)).status, 'an ingest-only token').to.equal(403);
  });
});
