import { expect } from 'chai';
import { migrate } from '../../src/db/migrate.js';
import { withDatabase } from '../../src/db/pool.js';
import { createLogger } from '../../src/logger.js';
import { adminToken, eventStoreUnderTest, servedApp, TestApp, type Credentials, type Reply } from '../support/app.js';
import { asAdmin, freshDatabase, type TestDatabase } from '../support/database.js';
import { accountRefs } from '../support/id-refs.js';
import { bulkResults, queued, requestError, uuidPattern } from '../support/replies.js';
import type { Lead, LeadPage, ListedLead } from '../../projections/leads/queries.js';

/** The read API: searching and paging leads, trackID lookups, and who may read what. */

interface TrackedEvent {
  eventId: string;
  type: string;
  stream: string;
  streamPosition: number;
  globalPosition: number;
  recordedAt: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

interface TrackReply {
  trackID: string;
  events: TrackedEvent[];
  streams: Record<string, TrackedEvent[]>;
}

const admin = `Bearer ${adminToken}`;
const bearer = (account: Credentials): string => `Bearer ${account.accessToken}`;
const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;
const idOf = (lead: Lead | ListedLead): string | null => lead.userId ?? lead.anonymousId;
const leadsPath = (account: Credentials, query = ''): string => `/admin/v1/accounts/${account.licenseCode}/leads${query}`;

describe('read API: searching leads (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });

  before(async () => {
    const results = bulkResults(
      await app.ingest(account, 'users/bulk', [
        { userId: 'u-ann', firstName: 'Ann', lastName: 'Lee', email: 'ann.lee@example.com', attributes: {} },
        { userId: 'u-bob', firstName: 'Bob', lastName: 'Marley', email: 'BOB@Example.org', attributes: {} },
        { anonymousId: 'anon-x1', city: 'Oslo', attributes: {} },
        { userId: 'u-carl', firstName: 'Carl', attributes: {} },
        { userId: 'u-carl', anonymousId: 'anon-x1', attributes: {} },
        { userId: 'u-pct', firstName: '100%', email: 'pct@example.com', attributes: {} },
        { userId: 'u-under', lastName: 'snake_case', attributes: {} },
        { anonymousId: 'visitor-9', attributes: {} },
        { userId: 'u-accents', firstName: 'Élodie', lastName: 'Ærø', email: 'ÉLODIE@EXAMPLE.FR', attributes: {} },
      ]),
    );
    expect(results.every((r) => r.status === 'queued'), JSON.stringify(results)).to.equal(true);
    await app.projected();
  });

  const search = async (q: string, token = admin): Promise<string[]> => {
    const reply = await app.get<LeadPage>(leadsPath(account, `?q=${encodeURIComponent(q)}`), token);
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body).to.have.all.keys('leads', 'nextCursor', 'total');
    return reply.body.leads.map(idOf) as string[];
  };

  it('lists every lead but merged anonymous profiles, newest first, without q', async () => {
    const reply = await app.get<LeadPage>(leadsPath(account), admin);
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body.leads.map(idOf)).to.deep.equal(['u-accents', 'visitor-9', 'u-under', 'u-pct', 'u-carl', 'u-bob', 'u-ann']);
    expect(reply.body.nextCursor).to.equal(null);
    const carl = reply.body.leads.find((l) => l.userId === 'u-carl');
    expect(carl).to.include({ city: 'Oslo', firstName: 'Carl' });
    expect(carl?.anonymousIds).to.deep.equal(['anon-x1']);
    expect(await search(''), 'an empty q filters nothing').to.deep.equal(reply.body.leads.map(idOf));
    expect(await search('   '), 'a blank q filters nothing').to.deep.equal(reply.body.leads.map(idOf));
  });

  const cases: [string, string, string[]][] = [
    ['a userId', 'u-bob', ['u-bob']],
    ['part of a userId', 'u-c', ['u-carl']],
    ['an anonymous profile id', 'visitor', ['visitor-9']],
    ['an email', 'ann.lee@example.com', ['u-ann']],
    ['part of an email, stored in capitals', 'bob@example.org', ['u-bob']],
    ['a first name', 'Carl', ['u-carl']],
    ['a last name', 'Marley', ['u-bob']],
    ['a full name', 'Ann Lee', ['u-ann']],
    ['a full name across first and last', 'n le', ['u-ann']],
    ['a merged anonymous id', 'anon-x1', ['u-carl']],
    ['a name in other case', 'mARLEY', ['u-bob']],
    ['an id in other case', 'U-ANN', ['u-ann']],
    ['a merged anonymous id in other case', 'ANON-X', ['u-carl']],
    ['a non-ASCII first name as stored', 'Élodie', ['u-accents']],
    ['a non-ASCII first name in lower case', 'élodie', ['u-accents']],
    ['a non-ASCII last name in upper case', 'ÆRØ', ['u-accents']],
    ['a non-ASCII full name in other case', 'éLODIE æRØ', ['u-accents']],
    ['a non-ASCII email in lower case', 'élodie@example', ['u-accents']],
    ['something no lead holds', 'zebra', []],
    ['% taken literally', '%', ['u-pct']],
    ['_ taken literally', '_', ['u-under']],
    ['a backslash taken literally', '\\', []],
    ['% between text taken literally', '0%', ['u-pct']],
    ['a pattern that would match everything as LIKE', '%_%', []],
  ];
  for (const [what, q, expected] of cases) {
    it(`finds leads by ${what} (q=${JSON.stringify(q)})`, async () => {
      expect(await search(q)).to.deep.equal(expected);
    });
  }

  it('does not find a lead by a value it only holds in its custom attributes or in a city', async () => {
    expect(await search('Oslo')).to.deep.equal([]);
  });

  it('takes the account access token as well as the admin token', async () => {
    expect(await search('carl', bearer(account))).to.deep.equal(['u-carl']);
  });

  it('looks leads up by ids holding URL-special and non-ASCII characters', async () => {
    const odd = await app.account('odd');
    const ids = ['a/b', '50% off', 'what?', 'x#y', 'ünï cødé', 'a+b', 'dot.dot'];
    for (const userId of ids) queued(await app.ingest(odd, 'users', { userId, firstName: `name of ${userId}`, attributes: {} }));
    queued(await app.ingest(odd, 'users', { userId: 'merged-into', anonymousId: 'anon/../x', attributes: {} }));
    await app.projected();
    for (const id of ids) {
      const reply = await app.get<Lead>(leadsPath(odd, `/${encodeURIComponent(id)}`), admin);
      expect(reply.status, `${id}: ${show(reply)}`).to.equal(200);
      expect(reply.body).to.include({ userId: id, firstName: `name of ${id}` });
      const events = await app.get(leadsPath(odd, `/${encodeURIComponent(id)}/events`), admin);
      expect(events.status, `${id}: ${show(events)}`).to.equal(200);
      const found = await app.get<LeadPage>(leadsPath(odd, `?q=${encodeURIComponent(id)}`), admin);
      expect(found.body.leads.map(idOf), id).to.include(id);
    }
    const merged = await app.get<Lead>(leadsPath(odd, `/${encodeURIComponent('anon/../x')}`), admin);
    expect(merged.status, show(merged)).to.equal(200);
    expect(merged.body.userId).to.equal('merged-into');
  });

  it('refuses a q longer than 200 characters (form A)', async () => {
    requestError(await app.get(leadsPath(account, `?q=${'a'.repeat(201)}`), admin), 400);
    expect(await search('a'.repeat(200))).to.deep.equal([]);
  });
});

describe('read API: searching leads on a database whose ctype is C (e2e)', () => {
  // initdb takes the locale of its environment: the embedded cluster of a service started without
  // LANG (a container, a systemd unit) gets LC_CTYPE=C, as may a DATABASE_URL server. The search
  // must still find non-ASCII names, at the very least as they were written.
  let app: TestApp;
  let account: Credentials;
  let database: TestDatabase;

  before(async () => {
    const clone = await freshDatabase();
    const name = `${clone.name}_c`;
    await clone.drop();
    await asAdmin((client) => client.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'`));
    database = {
      name,
      url: withDatabase(clone.url, name),
      drop: () => asAdmin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
    };
    await migrate(database.url, createLogger('silent'));
    app = await TestApp.start({}, { database, projections: true });
    account = await app.account();
    queued(await app.ingest(account, 'users', { userId: 'u-1', firstName: 'Élodie', lastName: 'Ærø', attributes: {} }));
    await app.projected();
  });

  after(async () => {
    await app?.stop();
    await database?.drop();
  });

  for (const q of ['Élodie', 'élodie', 'ÆRØ', 'Élodie Ærø']) {
    it(`finds 'Élodie Ærø' by q=${JSON.stringify(q)}`, async () => {
      const reply = await app.get<LeadPage>(leadsPath(account, `?q=${encodeURIComponent(q)}`), admin);
      expect(reply.status, show(reply)).to.equal(200);
      expect(reply.body.leads.map(idOf)).to.deep.equal(['u-1']);
    });
  }
});

describe('read API: paging leads (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });

  const ids = Array.from({ length: 12 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
  const newestFirst = [...ids].reverse();

  before(async () => {
    // Created one request at a time, in order: p-00 is the oldest.
    for (const userId of ids) queued(await app.ingest(account, 'users', { userId, firstName: `Name ${userId}`, attributes: {} }));
    await app.projected();
  });

  const page = async (query: string): Promise<LeadPage> => {
    const reply = await app.get<LeadPage>(leadsPath(account, query), admin);
    expect(reply.status, show(reply)).to.equal(200);
    return reply.body;
  };

  /** Follows nextCursor from the first page; the ids of every page. */
  const allPages = async (query: string): Promise<string[][]> => {
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const body: LeadPage = await page(`${query}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
      pages.push(body.leads.map(idOf) as string[]);
      cursor = body.nextCursor;
      expect(pages.length, 'pages').to.be.below(20);
    } while (cursor !== null);
    return pages;
  };

  it('pages through every lead with limit and cursor: newest first, no duplicates, no gaps, null cursor at the end', async () => {
    const pages = await allPages('?limit=5');
    expect(pages).to.deep.equal([newestFirst.slice(0, 5), newestFirst.slice(5, 10), newestFirst.slice(10)]);
  });

  it('ends with nextCursor null on a page that is exactly full', async () => {
    const pages = await allPages('?limit=4');
    expect(pages).to.deep.equal([newestFirst.slice(0, 4), newestFirst.slice(4, 8), newestFirst.slice(8)]);
    expect((await page('?limit=12')).nextCursor).to.equal(null);
    const first = await page('?limit=11');
    expect(first.nextCursor).to.be.a('string');
  });

  it('pages through search results with q kept', async () => {
    const pages = await allPages(`?q=${encodeURIComponent('name p-0')}&limit=3`);
    expect(pages).to.deep.equal([
      ['p-09', 'p-08', 'p-07'],
      ['p-06', 'p-05', 'p-04'],
      ['p-03', 'p-02', 'p-01'],
      ['p-00'],
    ]);
  });

  it('keeps a cursor valid while leads are added and updated: later pages neither repeat nor skip', async () => {
    const first = await page('?limit=5');
    queued(await app.ingest(account, 'users', { userId: 'p-new', attributes: {} }));
    queued(await app.ingest(account, 'users', { userId: 'p-03', lastName: 'Updated', attributes: {} }));
    await app.projected();
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor !== null) {
      const next = await page(`?limit=5&cursor=${encodeURIComponent(cursor)}`);
      rest.push(...(next.leads.map(idOf) as string[]));
      cursor = next.nextCursor;
    }
    expect([...(first.leads.map(idOf) as string[]), ...rest]).to.deep.equal(newestFirst);
    expect((await page('?limit=1')).leads.map(idOf), 'the new lead comes first').to.deep.equal(['p-new']);
  });

  it('gives 50 leads by default and accepts a limit up to 500', async () => {
    const other = await app.account('many');
    bulkResults(await app.ingest(other, 'users/bulk', Array.from({ length: 55 }, (_, i) => ({ userId: `m-${i}`, attributes: {} }))));
    await app.projected();
    const path = (query: string) => leadsPath(other, query);
    const first = await app.get<LeadPage>(path(''), admin);
    expect(first.body.leads).to.have.length(50);
    expect(first.body.leads[0]?.userId).to.equal('m-54');
    const second = await app.get<LeadPage>(path(`?cursor=${encodeURIComponent(first.body.nextCursor ?? '')}`), admin);
    expect(second.body.leads.map(idOf)).to.deep.equal(['m-4', 'm-3', 'm-2', 'm-1', 'm-0']);
    expect(second.body.nextCursor).to.equal(null);
    const all = await app.get<LeadPage>(path('?limit=500'), admin);
    expect(all.body.leads).to.have.length(55);
    expect(all.body.nextCursor).to.equal(null);
  });

  for (const limit of ['0', '501', '-1', '1.5', 'abc', '', '10&limit=20']) {
    it(`refuses limit=${limit} with 400 (form A)`, async () => {
      expect(requestError(await app.get(leadsPath(account, `?limit=${limit}`), admin), 400)).to.match(/limit/);
    });
  }

  const badCursors: [string, string][] = [
    ['not base64 JSON', 'garbage!!'],
    ['base64 of text', Buffer.from('hello').toString('base64url')],
    ['base64 JSON of the wrong shape', Buffer.from(JSON.stringify([1, 'user'])).toString('base64url')],
    ['base64 JSON with a position that is not an integer', Buffer.from(JSON.stringify(['1', 'user', 'p-1'])).toString('base64url')],
    ['given twice', 'a&cursor=b'],
  ];
  for (const [what, cursor] of badCursors) {
    it(`refuses a cursor that is ${what} with 400 (form A)`, async () => {
      expect(requestError(await app.get(leadsPath(account, `?cursor=${cursor}`), admin), 400)).to.match(/cursor/);
    });
  }
});

describe('read API: trackIDs (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  let other: Credentials;
  servedApp((started) => ({ app, account } = started), { scope: 'suite', projections: true });

  before(async () => {
    other = await app.account('other');
  });

  const trackPath = (on: Credentials, trackID: string): string => `/admin/v1/accounts/${on.licenseCode}/track/${trackID}`;
  const track = async (on: Credentials, trackID: string, token = admin): Promise<TrackReply> => {
    await app.projected();
    const reply = await app.get<TrackReply>(trackPath(on, trackID), token);
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body).to.have.all.keys('trackID', 'events', 'streams', 'nextCursor');
    return reply.body;
  };

  /** The reply's events as the event store holds them. */
  const expectStored = async (events: TrackedEvent[]): Promise<void> => {
    const stored = await app.events();
    for (const event of events) {
      const row = stored.find((s) => s.event_id === event.eventId);
      expect(row, `stored event ${event.eventId}`).to.not.equal(undefined);
      expect(event).to.deep.equal({
        eventId: row?.event_id,
        type: row?.event_type,
        stream: row?.stream_name,
        streamPosition: Number(row?.stream_position),
        globalPosition: Number(row?.global_position),
        recordedAt: event.recordedAt,
        data: row?.data,
        metadata: row?.metadata,
      });
      expect(Date.parse(event.recordedAt)).to.be.closeTo(Date.now(), 60_000);
    }
  };

  it('shows the single event of a user upsert', async () => {
    const trackID = queued(await app.ingest(account, 'users', { userId: 'u-1', email: 'u1@example.com', attributes: {} }));
    const body = await track(account, trackID);
    expect(body.trackID).to.equal(trackID);
    expect(body.events).to.have.length(1);
    expect(body.events[0]).to.include({ eventId: trackID, type: 'UserUpserted', streamPosition: 0 });
    const refs = await accountRefs(app, account);
    expect(body.events[0]?.stream).to.equal(`user-${refs.accountId}-${refs.user('u-1')}`);
    expect(body.events[0]?.data).to.deep.include({ userId: 'u-1', profile: { email: 'u1@example.com' } });
    expect(body.events[0]?.metadata).to.include({ trackId: trackID, schemaVersion: 1 });
    await expectStored(body.events);
  });

  it('shows UserUpserted then ProfilesMerged, with their positions, for a user sent with a merge', async () => {
    queued(await app.ingest(account, 'users', { anonymousId: 'a-1', attributes: {} }));
    queued(await app.ingest(account, 'users', { userId: 'u-2', attributes: {} }));
    const trackID = queued(await app.ingest(account, 'users', { userId: 'u-2', anonymousId: 'a-1', attributes: {} }));
    const { events } = await track(account, trackID);
    expect(events.map((e) => e.type)).to.deep.equal(['UserUpserted', 'ProfilesMerged']);
    const [upsert, merge] = events;
    expect(upsert?.eventId).to.equal(trackID);
    expect(merge?.eventId).to.match(uuidPattern).and.not.equal(trackID);
    expect(merge?.stream).to.equal(upsert?.stream);
    expect([upsert?.streamPosition, merge?.streamPosition]).to.deep.equal([1, 2]);
    expect(merge?.globalPosition).to.be.greaterThan(upsert?.globalPosition ?? Infinity);
    // Postgres numbers events one by one; EventStoreDB's positions are places in its log.
    if (eventStoreUnderTest === 'postgres') expect(merge?.globalPosition).to.equal((upsert?.globalPosition ?? NaN) + 1);
    expect(merge?.data).to.deep.equal({ userId: 'u-2', anonymousId: 'a-1' });
    expect(merge?.metadata.trackId).to.equal(trackID);
    await expectStored(events);
  });

  it('shows events, products and product events by their trackIDs', async () => {
    const sent: [string, Record<string, unknown>, string][] = [
      ['events', { userId: 'u-1', eventName: 'login' }, 'EventTracked'],
      ['products', { productId: 'p-1', properties: { name: 'Shoe' } }, 'ProductSubmitted'],
      ['productsevents', { productId: 'p-1', eventName: 'view' }, 'ProductEventTracked'],
    ];
    for (const [endpoint, body, type] of sent) {
      const trackID = queued(await app.ingest(account, endpoint, body));
      const { events } = await track(account, trackID);
      expect(events.map((e) => e.type), endpoint).to.deep.equal([type]);
      await expectStored(events);
    }
  });

  it('answers 404 (form A) for an unknown trackID and for one that is not a UUID', async () => {
    await app.projected();
    requestError(await app.get(trackPath(account, '0190a5a0-0000-7000-8000-000000000000'), admin), 404);
    requestError(await app.get(trackPath(account, 'not-a-track-id'), admin), 404);
  });

  it('shows the stream of a trackID up to and including its events', async () => {
    const trackIDs = [];
    for (const points of [1, 2, 3]) trackIDs.push(queued(await app.ingest(account, 'users', { userId: 'u-streamed', points, attributes: {} })));
    const body = await track(account, trackIDs[1] as string);
    const stream = body.events[0]?.stream as string;
    expect(Object.keys(body.streams)).to.deep.equal([stream]);
    const shown = body.streams[stream] ?? [];
    expect(shown.map((e) => e.streamPosition)).to.deep.equal([0, 1]);
    expect(shown.map((e) => e.metadata.trackId)).to.deep.equal(trackIDs.slice(0, 2));
    expect(shown[1]).to.deep.equal(body.events[0]);
    await expectStored(shown);
  });

  it('shows at most the 100 events before a trackID of its stream', async () => {
    for (const from of [0, 60]) {
      const bulk = bulkResults(
        await app.ingest(account, 'users/bulk', Array.from({ length: 60 }, (_, i) => ({ userId: 'u-long', points: from + i, attributes: {} }))),
      );
      expect(bulk.every((r) => r.status === 'queued')).to.equal(true);
    }
    const last = queued(await app.ingest(account, 'users', { userId: 'u-long', points: 120, attributes: {} }));
    const body = await track(account, last);
    const shown = Object.values(body.streams)[0] ?? [];
    expect(shown).to.have.length(101);
    expect(shown.map((e) => e.streamPosition)).to.deep.equal(Array.from({ length: 101 }, (_, i) => 20 + i));
  });

  it("answers 404 for another account's trackID, with this account's token or the admin token", async () => {
    const theirs = queued(await app.ingest(other, 'users', { userId: 'u-1', attributes: {} }));
    await track(other, theirs, bearer(other));
    requestError(await app.get(trackPath(account, theirs), bearer(account)), 404);
    requestError(await app.get(trackPath(account, theirs), admin), 404);
  });

  it("answers 401 (form A) to one account's token on another account's license, even for its own trackID", async () => {
    const theirs = queued(await app.ingest(other, 'users', { userId: 'u-9', attributes: {} }));
    const ours = queued(await app.ingest(account, 'users', { userId: 'u-9', attributes: {} }));
    await app.projected();
    requestError(await app.get(trackPath(account, theirs), bearer(other)), 401);
    requestError(await app.get(trackPath(account, ours), bearer(other)), 401);
  });

  it('answers 401 without a token or with a wrong one, and takes the admin token', async () => {
    const trackID = queued(await app.ingest(account, 'users', { userId: 'u-3', attributes: {} }));
    await app.projected();
    requestError(await app.get(trackPath(account, trackID)), 401);
    requestError(await app.get(trackPath(account, trackID), 'Bearer not-a-token'), 401);
    requestError(await app.get(trackPath(account, trackID), `Bearer ${adminToken}x`), 401);
    expect((await track(account, trackID, admin)).events).to.have.length(1);
    expect((await track(account, trackID, bearer(account))).events).to.have.length(1);
  });
});

describe('read API: one account cannot read another (e2e)', () => {
  let app: TestApp;
  let a: Credentials;
  let b: Credentials;
  servedApp((started) => ({ app, account: a } = started), { scope: 'suite', projections: true });

  before(async () => {
    b = await app.account('b');
    queued(await app.ingest(a, 'users', { userId: 'u-1', firstName: 'Alice of A', attributes: {} }));
    queued(await app.ingest(a, 'events', { userId: 'u-1', eventName: 'login' }));
    queued(await app.ingest(b, 'users', { userId: 'u-1', firstName: 'Bert of B', attributes: {} }));
    queued(await app.ingest(b, 'users', { userId: 'u-2', attributes: {} }));
    await app.projected();
  });

  const paths = (on: Credentials): string[] => [
    `/admin/v1/accounts/${on.licenseCode}/leads`,
    `/admin/v1/accounts/${on.licenseCode}/leads?q=u-1`,
    `/admin/v1/accounts/${on.licenseCode}/leads/u-1`,
    `/admin/v1/accounts/${on.licenseCode}/leads/u-1/events`,
  ];

  it("answers 401 (form A) to account B's token on every lead path of account A", async () => {
    for (const path of paths(a)) requestError(await app.get(path, bearer(b)), 401);
  });

  it('answers 401 without a token or with an unknown one', async () => {
    for (const path of paths(a)) {
      requestError(await app.get(path), 401);
      requestError(await app.get(path, 'Bearer nope'), 401);
    }
  });

  it("shows each account only its own leads, with its own token or the admin token", async () => {
    for (const token of [bearer(a), admin]) {
      const list = await app.get<LeadPage>(`/admin/v1/accounts/${a.licenseCode}/leads`, token);
      expect(list.status, show(list)).to.equal(200);
      expect(list.body.leads.map((l) => [l.userId, l.firstName])).to.deep.equal([['u-1', 'Alice of A']]);
      const one = await app.get<Lead>(`/admin/v1/accounts/${a.licenseCode}/leads/u-1`, token);
      expect(one.body.firstName).to.equal('Alice of A');
      const events = await app.get<{ events: { eventName: string }[] }>(`/admin/v1/accounts/${a.licenseCode}/leads/u-1/events`, token);
      expect(events.body.events.map((e) => e.eventName)).to.deep.equal(['login']);
    }
    const theirs = await app.get<LeadPage>(`/admin/v1/accounts/${b.licenseCode}/leads`, bearer(b));
    expect(theirs.body.leads.map((l) => [l.userId, l.firstName])).to.deep.equal([
      ['u-2', null],
      ['u-1', 'Bert of B'],
    ]);
    const theirEvents = await app.get<{ events: unknown[] }>(`/admin/v1/accounts/${b.licenseCode}/leads/u-1/events`, bearer(b));
    expect(theirEvents.body.events, "account A's event of the same userId").to.deep.equal([]);
    requestError(await app.get(`/admin/v1/accounts/${b.licenseCode}/leads/u-2`, bearer(a)), 401);
  });
});
