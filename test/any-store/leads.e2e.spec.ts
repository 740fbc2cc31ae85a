import { expect } from 'chai';
import type { Config } from '../../src/config.js';
import type { Lead, TimelineEvent } from '../../projections/leads/queries.js';
import { adminToken, servedApp, TestApp, type Credentials, type Reply } from '../support/app.js';
import { bulkResults, queued, requestError } from '../support/replies.js';
import { attributesUnderSpecNames } from '../../src/spec/system-attributes.js';

/**
 * The leads read model as the read API shows it (GET /admin/v1/accounts/:license/leads/:id), built
 * by the projection workers from what the ingest endpoints accepted; and the products read model.
 */

const admin = `Bearer ${adminToken}`;

/** The system attributes of docs/spec.md 2.2 as the lead JSON names them. */
const systemAttributes = attributesUnderSpecNames.map((a) => a.name);

const microsecondTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** An ISO UTC time as the read API shows times: six fraction digits and `Z`. */
function micros(iso: string): string {
  const match = /^(.*T\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z$/.exec(iso);
  expect(match, `a UTC ISO time: ${iso}`).to.not.equal(null);
  return `${match?.[1]}.${(match?.[2] ?? '').padEnd(6, '0').slice(0, 6)}Z`;
}

/** A lead with every field as a new profile has it: ids, nulls and the defaults. */
function blankLead(fields: Partial<Lead>, receivedAt: string): Lead {
  return {
    userId: null,
    anonymousId: null,
    anonymousIds: [],
    firstName: null,
    lastName: null,
    ...Object.fromEntries(systemAttributes.map((name) => [name, null])),
    opt_in_sms: true,
    opt_in_email: true,
    points: 0,
    date_identified: receivedAt,
    attributes: {},
    attributeTypes: {},
    mergedInto: null,
    createdAt: receivedAt,
    updatedAt: receivedAt,
    version: 1,
    ...fields,
  } as Lead;
}

const show = (reply: Reply): string => `HTTP ${reply.status} ${JSON.stringify(reply.body)}`;

/** Helpers bound to a served app. */
function helpers(get: () => TestApp) {
  const path = (account: Credentials, rest: string): string => `/admin/v1/accounts/${account.licenseCode}${rest}`;
  return {
    async send(account: Credentials, body: Record<string, unknown>, endpoint = 'users'): Promise<string> {
      return queued(await get().ingest(account, endpoint, body));
    },
    async receivedAt(trackID: string): Promise<string> {
      const event = (await get().events()).find((e) => e.event_id === trackID);
      expect(event, `stored event ${trackID}`).to.not.equal(undefined);
      return micros(String(event?.metadata.receivedAt));
    },
    async lead(account: Credentials, id: string): Promise<Lead> {
      await get().projected();
      const reply = await get().get<Lead>(path(account, `/leads/${encodeURIComponent(id)}`), admin);
      expect(reply.status, show(reply)).to.equal(200);
      return reply.body;
    },
    async list(account: Credentials, query = ''): Promise<Lead[]> {
      await get().projected();
      const reply = await get().get<{ leads: Lead[]; nextCursor: string | null }>(path(account, `/leads${query}`), admin);
      expect(reply.status, show(reply)).to.equal(200);
      return reply.body.leads;
    },
    async timeline(account: Credentials, id: string): Promise<TimelineEvent[]> {
      await get().projected();
      const reply = await get().get<{ events: TimelineEvent[]; nextCursor: string | null }>(path(account, `/leads/${encodeURIComponent(id)}/events`), admin);
      expect(reply.status, show(reply)).to.equal(200);
      expect(reply.body).to.have.all.keys('events', 'nextCursor');
      // A few small events: one page.
      expect(reply.body.nextCursor).to.equal(null);
      return reply.body.events;
    },
    path,
  };
}

/** Known and anonymous rows of the leads table, for what the API does not show of merged anonymous profiles. */
async function anonymousRow(app: TestApp, account: Credentials, anonymousId: string): Promise<Record<string, unknown> | undefined> {
  const { rows } = await app.pool.query(
    `SELECT l.* FROM leads l JOIN accounts a ON a.id = l.account_id
     WHERE a.license_code = $1 AND l.profile_kind = 'anonymous' AND l.profile_id = $2`,
    [account.licenseCode, anonymousId],
  );
  return rows[0] as Record<string, unknown> | undefined;
}

/**
 * Scenarios whose result must not depend on how the workers cut the events into batches: run with
 * the default batch size and with one event per batch.
 */
function mergeAndModelScenarios(config: Partial<Config>): void {
  let app: TestApp;
  servedApp((started) => ({ app } = started), { scope: 'suite', projections: true, config });
  const { send, lead, list, receivedAt } = helpers(() => app);
  let n = 0;
  const account = (): Promise<Credentials> => app.account(`leads-${(n += 1)}`);

  it('merge, anonymous profile first: the known profile keeps what it was sent and takes the anonymous values for the rest', async () => {
    const acme = await account();
    await send(acme, {
      anonymousId: 'a-1',
      firstName: 'Anon',
      email: 'anon@example.com',
      city: 'Paris',
      opt_in_sms: false,
      attributes: { plan: 'free', source: 'ad' },
    });
    await send(acme, { userId: 'u-1', email: 'known@example.com', attributes: { plan: 'pro' } });
    await app.projected();
    await send(acme, { userId: 'u-1', anonymousId: 'a-1', lastName: 'Known', attributes: {} });

    const known = await lead(acme, 'u-1');
    expect(known).to.include({
      userId: 'u-1',
      anonymousId: null,
      firstName: 'Anon',
      lastName: 'Known',
      email: 'known@example.com',
      city: 'Paris',
      opt_in_sms: false,
      opt_in_email: true,
      points: 0,
      mergedInto: null,
    });
    expect(known.anonymousIds).to.deep.equal(['a-1']);
    expect(known.attributes).to.deep.equal({ plan: 'pro', source: 'ad' });
    expect(known.attributeTypes).to.deep.equal({ plan: 'string', source: 'string' });
    expect((await list(acme)).map((l) => l.userId ?? l.anonymousId), 'the merged anonymous profile is not listed').to.deep.equal(['u-1']);
    expect(await anonymousRow(app, acme, 'a-1')).to.include({ merged_into: 'u-1', email: 'anon@example.com', first_name: 'Anon' });

    // After the merge, the anonymous profile's new values fill gaps only.
    await send(acme, { anonymousId: 'a-1', email: 'later@example.com', country: 'FR', attributes: { plan: 'trial' } });
    const later = await lead(acme, 'u-1');
    expect(later).to.include({ email: 'known@example.com', country: 'FR', firstName: 'Anon' });
    expect(later.attributes).to.deep.equal({ plan: 'pro', source: 'ad' });
  });

  it('merge first: later anonymous-only upserts fill the gaps of the known profile but never overwrite its own values', async () => {
    const acme = await account();
    await send(acme, { userId: 'u-1', anonymousId: 'a-1', email: 'known@example.com', attributes: { plan: 'pro' } });
    await app.projected();
    const merged = await lead(acme, 'a-1');
    expect(merged.userId, 'a merged anonymous id resolves to its known user before it was ever upserted').to.equal('u-1');
    expect(merged.anonymousIds).to.deep.equal(['a-1']);

    await send(acme, {
      anonymousId: 'a-1',
      firstName: 'Anon',
      email: 'anon@example.com',
      opt_in_email: false,
      attributes: { plan: 'free', source: 'ad' },
    });
    await send(acme, { anonymousId: 'a-1', firstName: 'Anna', attributes: {} });
    let known = await lead(acme, 'u-1');
    expect(known).to.include({ firstName: 'Anna', email: 'known@example.com', opt_in_email: false, opt_in_sms: true, mergedInto: null });
    expect(known.attributes).to.deep.equal({ plan: 'pro', source: 'ad' });

    await send(acme, { userId: 'u-1', firstName: 'Own', attributes: {} });
    await send(acme, { anonymousId: 'a-1', firstName: 'Late', phone: '+33 1', attributes: {} });
    known = await lead(acme, 'u-1');
    expect(known).to.include({ firstName: 'Own', phone: '+33 1', email: 'known@example.com' });
    expect(known.anonymousIds).to.deep.equal(['a-1']);
    expect((await list(acme)).map((l) => l.userId ?? l.anonymousId)).to.deep.equal(['u-1']);
    expect(await anonymousRow(app, acme, 'a-1')).to.include({ merged_into: 'u-1', first_name: 'Late' });
  });

  it('gives the known profile the same values whichever profile came first', async () => {
    const anonymous = { anonymousId: 'a-1', firstName: 'Anon', city: 'Paris', opt_in_sms: false, attributes: { source: 'ad', plan: 'free' } };
    const known = { userId: 'u-1', email: 'known@example.com', attributes: { plan: 'pro' } };
    const merge = { userId: 'u-1', anonymousId: 'a-1', attributes: {} };
    const anonymousFirst = await account();
    for (const body of [anonymous, known, merge]) await send(anonymousFirst, body);
    const mergeFirst = await account();
    for (const body of [known, merge, anonymous]) await send(mergeFirst, body);

    const values = (lead: Lead): Record<string, unknown> => {
      const { createdAt, updatedAt, date_identified, version, ...rest } = lead;
      void [createdAt, updatedAt, date_identified, version];
      return rest;
    };
    const a = await lead(anonymousFirst, 'u-1');
    const b = await lead(mergeFirst, 'u-1');
    expect(values(b)).to.deep.equal(values(a));
    expect(a).to.include({ firstName: 'Anon', city: 'Paris', email: 'known@example.com', opt_in_sms: false });
    expect(a.attributes).to.deep.equal({ plan: 'pro', source: 'ad' });
  });

  it('a repeated merge changes nothing more: values, anonymousIds and the anonymous row stay; only its own UserUpserted counts', async () => {
    const acme = await account();
    await send(acme, { anonymousId: 'a-1', city: 'Paris', attributes: { source: 'ad' } });
    await send(acme, { userId: 'u-1', email: 'known@example.com', attributes: {} });
    const mergeBody = { userId: 'u-1', anonymousId: 'a-1', attributes: {} };
    await send(acme, mergeBody);
    const first = await lead(acme, 'u-1');
    expect(first.version, 'UserUpserted, UserUpserted of the merge request, ProfilesMerged').to.equal(3);
    const anonymousBefore = await anonymousRow(app, acme, 'a-1');

    const repeatTrackID = await send(acme, mergeBody);
    const again = await lead(acme, 'u-1');
    const { version, updatedAt, ...rest } = again;
    const { version: firstVersion, updatedAt: firstUpdated, ...firstRest } = first;
    void [updatedAt, firstUpdated];
    expect(rest).to.deep.equal(firstRest);
    expect(again.anonymousIds).to.deep.equal(['a-1']);
    expect(version, 'the repeat stored one UserUpserted and no second ProfilesMerged').to.equal(firstVersion + 1);
    expect(again.updatedAt).to.equal(await receivedAt(repeatTrackID));
    expect(await anonymousRow(app, acme, 'a-1'), 'the anonymous row is not touched again').to.deep.equal(anonymousBefore);
    const { rows } = await app.pool.query(
      'SELECT m.user_id FROM lead_merges m JOIN accounts a ON a.id = m.account_id WHERE a.license_code = $1',
      [acme.licenseCode],
    );
    expect(rows).to.deep.equal([{ user_id: 'u-1' }]);
  });

  it('a merge replayed with its Idempotency-Key changes nothing at all (version included)', async () => {
    const acme = await account();
    const withKey = { headers: { 'idempotency-key': 'merge-1' } };
    await send(acme, { anonymousId: 'a-1', city: 'Paris', attributes: {} });
    const mergeBody = { userId: 'u-1', anonymousId: 'a-1', email: 'known@example.com', attributes: {} };
    queued(await app.ingest(acme, 'users', mergeBody, withKey));
    const first = await lead(acme, 'u-1');
    queued(await app.ingest(acme, 'users', mergeBody, withKey));
    expect(await lead(acme, 'u-1')).to.deep.equal(first);
  });

  it('users/bulk: every accepted element reaches the leads, merges included, and rejected ones leave nothing', async () => {
    const acme = await account();
    const results = bulkResults(
      await app.ingest(acme, 'users/bulk', [
        { userId: 'b-1', firstName: 'Bea', attributes: { plan: 'gold' } },
        { anonymousId: 'ba-1', city: 'Oslo', attributes: {} },
        { userId: 'b-1', lastName: 'Berg', attributes: {} },
        { userId: 'bad', children: 'two', attributes: {} },
        { userId: 'b-2', anonymousId: 'ba-1', email: 'b2@example.com', attributes: {} },
        { anonymousId: 'ba-2', attributes: { visits: 2 } },
      ]),
    );
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'queued', 'queued', 'error', 'queued', 'queued']);
    const b1 = await lead(acme, 'b-1');
    expect(b1).to.include({ firstName: 'Bea', lastName: 'Berg', version: 2 });
    expect(b1.attributes).to.deep.equal({ plan: 'gold' });
    expect(b1.createdAt).to.equal(await receivedAt(results[0]?.trackID as string));
    const b2 = await lead(acme, 'b-2');
    expect(b2).to.include({ email: 'b2@example.com', city: 'Oslo' });
    expect(b2.anonymousIds).to.deep.equal(['ba-1']);
    const ba2 = await lead(acme, 'ba-2');
    expect(ba2).to.include({ userId: null, anonymousId: 'ba-2', mergedInto: null });
    expect(ba2.attributes).to.deep.equal({ visits: 2 });
    expect((await list(acme)).map((l) => l.userId ?? l.anonymousId), 'newest first, merged ba-1 left out').to.deep.equal(['ba-2', 'b-2', 'b-1']);
    const missing = await app.get(helpers(() => app).path(acme, '/leads/bad'), admin);
    requestError(missing, 404);
  });

  it('merges several anonymous ids into one user, in merge order, each resolving to it', async () => {
    const acme = await account();
    await send(acme, { anonymousId: 'a-1', city: 'Paris', attributes: {} });
    await send(acme, { anonymousId: 'a-2', country: 'FR', attributes: { source: 'ad' } });
    await send(acme, { userId: 'u-1', anonymousId: 'a-2', attributes: {} });
    await send(acme, { userId: 'u-1', anonymousId: 'a-1', attributes: {} });
    await send(acme, { userId: 'u-1', anonymousId: 'a-3', attributes: {} });
    await send(acme, { anonymousId: 'a-3', phone: '+33 2', attributes: {} });
    const known = await lead(acme, 'u-1');
    expect(known.anonymousIds).to.deep.equal(['a-2', 'a-1', 'a-3']);
    expect(known).to.include({ city: 'Paris', country: 'FR', phone: '+33 2' });
    expect(known.attributes).to.deep.equal({ source: 'ad' });
    for (const id of ['a-1', 'a-2', 'a-3']) {
      expect(await lead(acme, id), `lead by ${id}`).to.deep.equal(known);
    }
    expect((await list(acme)).map((l) => l.userId)).to.deep.equal(['u-1']);
  });

  it('products: latest properties, who sent them and how often; product events as rows', async () => {
    const acme = await account();
    const first = await send(acme, { productId: 'p-1', userId: 'u-1', properties: { name: 'Shoe', price: 10, tags: ['a'] } }, 'products');
    await send(acme, { productId: 'p-2', properties: { name: 'Hat' } }, 'products');
    const latest = await send(acme, { productId: 'p-1', userId: 'u-2', properties: { name: 'Shoe', price: 12 } }, 'products');
    const view = await send(
      acme,
      { productId: 'p-1', userId: 'u-1', eventName: 'view', eventTime: '2024-01-01T10:00:00.5+0100', eventData: { page: 3 } },
      'productsevents',
    );
    const buy = await send(acme, { productId: 'p-1', eventName: 'buy' }, 'productsevents');
    await app.projected();

    const { rows: products } = await app.pool.query(
      `SELECT p.product_id, p.properties, p.sent_by_user_id, p.version, iso_utc(p.created_at) AS created_at, iso_utc(p.changed_at) AS changed_at
       FROM products p JOIN accounts a ON a.id = p.account_id WHERE a.license_code = $1 ORDER BY p.product_id`,
      [acme.licenseCode],
    );
    expect(products).to.deep.equal([
      {
        product_id: 'p-1',
        properties: { name: 'Shoe', price: 12 },
        sent_by_user_id: 'u-2',
        version: 2,
        created_at: await receivedAt(first),
        changed_at: await receivedAt(latest),
      },
      {
        product_id: 'p-2',
        properties: { name: 'Hat' },
        sent_by_user_id: null,
        version: 1,
        created_at: products[1]?.created_at,
        changed_at: products[1]?.created_at,
      },
    ]);

    const { rows: events } = await app.pool.query(
      `SELECT e.event_id, e.product_id, e.user_id, e.event_name, e.event_time, iso_utc(e.event_time_utc) AS event_time_utc,
              e.event_data, iso_utc(e.received_at) AS received_at
       FROM product_events e JOIN accounts a ON a.id = e.account_id WHERE a.license_code = $1 ORDER BY e.global_position`,
      [acme.licenseCode],
    );
    expect(events).to.deep.equal([
      {
        event_id: view,
        product_id: 'p-1',
        user_id: 'u-1',
        event_name: 'view',
        event_time: '2024-01-01T10:00:00.5+0100',
        event_time_utc: '2024-01-01T09:00:00.500000Z',
        event_data: { page: 3 },
        received_at: await receivedAt(view),
      },
      {
        event_id: buy,
        product_id: 'p-1',
        user_id: null,
        event_name: 'buy',
        event_time: null,
        event_time_utc: await receivedAt(buy),
        event_data: {},
        received_at: await receivedAt(buy),
      },
    ]);
  });
}

describe('leads read model (e2e)', () => {
  let app: TestApp;
  servedApp((started) => ({ app } = started), { scope: 'suite', projections: true });
  const { send, lead, timeline, receivedAt, path } = helpers(() => app);
  let n = 0;
  const account = (): Promise<Credentials> => app.account(`leads-${(n += 1)}`);

  it('creates a lead with the defaults: opt-ins true, points 0, date_identified = createdAt = receipt of the first event', async () => {
    const acme = await account();
    const trackID = await send(acme, { userId: 'u-1', attributes: {} });
    const at = await receivedAt(trackID);
    expect(at).to.match(microsecondTime);
    const shown = await lead(acme, 'u-1');
    const expected = blankLead({ userId: 'u-1' }, at);
    expect(shown).to.deep.equal(expected);
    expect(Object.keys(shown), 'fields in the documented order').to.deep.equal(Object.keys(expected));
  });

  it('creates an anonymous lead with the same defaults', async () => {
    const acme = await account();
    const trackID = await send(acme, { anonymousId: 'visitor-1', attributes: {} });
    expect(await lead(acme, 'visitor-1')).to.deep.equal(blankLead({ anonymousId: 'visitor-1' }, await receivedAt(trackID)));
  });

  it('updates only the keys an upsert carries and keeps the others, explicit values overriding the defaults', async () => {
    const acme = await account();
    const created = await send(acme, {
      userId: 'u-1',
      firstName: 'Ann',
      lastName: 'Lee',
      email: 'ann@example.com',
      city: 'Berlin',
      birth_date: '1990-05-01T00:00:00+0200',
      children: 2,
      opt_in_sms: false,
      points: 10,
      attributes: { plan: 'gold', visits: 3 },
    });
    await app.projected();
    await send(acme, { userId: 'u-1', email: 'ann@example.org', opt_in_email: false, attributes: { visits: 4 } });
    await app.projected();
    const last = await send(acme, { userId: 'u-1', attributes: {} });
    const createdAt = await receivedAt(created);
    expect(await lead(acme, 'u-1')).to.deep.equal(
      blankLead(
        {
          userId: 'u-1',
          firstName: 'Ann',
          lastName: 'Lee',
          email: 'ann@example.org',
          city: 'Berlin',
          birth_date: '1990-04-30T22:00:00.000000Z',
          children: 2,
          opt_in_sms: false,
          opt_in_email: false,
          points: 10,
          attributes: { plan: 'gold', visits: 4 },
          attributeTypes: { plan: 'string', visits: 'number' },
          updatedAt: await receivedAt(last),
          version: 3,
        },
        createdAt,
      ),
    );
  });

  it('shows every system attribute it was sent, times as UTC with microseconds', async () => {
    const acme = await account();
    const sent = {
      email: 'x@example.com', gender: 'f', maritial_status: 'single', children: 1, education: 'phd', title: 'Dr', address: 'Main St 1',
      city: 'Rome', state: 'RM', zipcode: '00100', country: 'IT', phone: '+39', job_position: 'CTO', company: 'Acme',
      number_of_employees: 50, annual_revenue: 1000000, opt_in_sms: false, opt_in_email: false, mobile: '+39 3', points: 7,
      device_type: 'ios', utm_source: 'news',
    };
    await send(acme, {
      userId: 'u-1',
      ...sent,
      birth_date: '1980-01-02T03:04:05.123456-0130',
      last_active: '2024-06-01T12:00:00Z',
      updated_at: '2024-06-02T00:00:00',
      date_identified: '2023-12-31T23:00:00-0100',
      attributes: {},
    });
    const shown = await lead(acme, 'u-1');
    expect(shown).to.include(sent);
    expect(shown).to.include({
      birth_date: '1980-01-02T04:34:05.123456Z',
      last_active: '2024-06-01T12:00:00.000000Z',
      updated_at: '2024-06-02T00:00:00.000000Z',
      date_identified: '2024-01-01T00:00:00.000000Z',
    });
  });

  it('keeps custom attributes with their types, datetimes as UTC instants', async () => {
    const acme = await account();
    await send(acme, {
      userId: 'u-1',
      attributes: { visits: 3, ratio: 0.5, plan: 'gold', vip: true, churned: false, last_login: '2024-01-01T12:00:00+0200', precise: '2024-03-01T00:00:00.123456-0130' },
    });
    await send(acme, { userId: 'u-1', attributes: { visits: 4, plan: 'platinum' } });
    const shown = await lead(acme, 'u-1');
    expect(shown.attributeTypes).to.deep.equal({
      visits: 'number', ratio: 'number', plan: 'string', vip: 'boolean', churned: 'boolean', last_login: 'datetime', precise: 'datetime',
    });
    const { last_login: lastLogin, precise, ...others } = shown.attributes;
    expect(others).to.deep.equal({ visits: 4, ratio: 0.5, plan: 'platinum', vip: true, churned: false });
    expect(lastLogin).to.be.a('string').and.match(/^2024-01-01T10:00:00(\.0+)?Z$/);
    expect(precise).to.be.a('string').and.match(/^2024-03-01T01:30:00\.123456Z$/);
  });

  it('looks a lead up by userId, anonymousId or merged anonymousId; 404 (form A) when unknown', async () => {
    const acme = await account();
    await send(acme, { anonymousId: 'a-1', attributes: {} });
    await send(acme, { anonymousId: 'a-2', city: 'Lyon', attributes: {} });
    await send(acme, { userId: 'u-1', anonymousId: 'a-1', attributes: {} });
    expect((await lead(acme, 'u-1')).userId).to.equal('u-1');
    const byMerged = await lead(acme, 'a-1');
    expect(byMerged).to.include({ userId: 'u-1', anonymousId: null, mergedInto: null });
    expect(byMerged.anonymousIds).to.deep.equal(['a-1']);
    expect(await lead(acme, 'a-2')).to.include({ userId: null, anonymousId: 'a-2', city: 'Lyon' });
    requestError(await app.get(path(acme, '/leads/nobody'), admin), 404);
    requestError(await app.get(path(acme, '/leads/nobody/events'), admin), 404);
  });

  it('shows the timeline of a profile with its merged anonymous profiles, latest first, and nothing of others', async () => {
    const acme = await account();
    const event = (body: Record<string, unknown>) => send(acme, { eventName: 'visit', ...body }, 'events');
    const before = await event({ anonymousId: 'a-1', eventName: 'landing', eventTime: '2024-01-01T10:00:00+0100', eventData: { page: '/' } });
    await send(acme, { userId: 'u-1', anonymousId: 'a-1', attributes: {} });
    const own = await event({ userId: 'u-1', eventName: 'signup', eventTime: '2024-01-02T00:00:00Z' });
    const after = await event({ anonymousId: 'a-1', eventName: 'scroll', eventTime: '2024-01-01T12:00:00Z' });
    const untimed = await event({ userId: 'u-1', eventName: 'ping' });
    await event({ userId: 'u-2', eventTime: '2024-01-03T00:00:00Z' });
    const stranger = await event({ anonymousId: 'a-9', eventTime: '2024-01-04T00:00:00Z' });
    await send(acme, { anonymousId: 'a-9', attributes: {} });

    const events = await timeline(acme, 'u-1');
    expect(events.map((e) => e.eventId)).to.deep.equal([untimed, own, after, before]);
    expect(events[3]).to.deep.equal({
      eventId: before,
      userId: null,
      anonymousId: 'a-1',
      eventName: 'landing',
      eventTime: '2024-01-01T10:00:00+0100',
      eventTimeUtc: '2024-01-01T09:00:00.000000Z',
      eventData: { page: '/' },
      receivedAt: await receivedAt(before),
      trackID: before,
    });
    expect(events[0]).to.include({ userId: 'u-1', anonymousId: null, eventName: 'ping', eventTime: null, eventTimeUtc: await receivedAt(untimed) });
    expect(await timeline(acme, 'a-1'), 'by the merged anonymous id: the known timeline').to.deep.equal(events);
    expect((await timeline(acme, 'a-9')).map((e) => e.eventId)).to.deep.equal([stranger]);
  });

  it('limits the timeline to ?limit= and refuses a bad limit (form A)', async () => {
    const acme = await account();
    for (const hour of ['01', '02', '03']) await send(acme, { userId: 'u-1', eventName: 'e', eventTime: `2024-01-01T${hour}:00:00Z` }, 'events');
    await send(acme, { userId: 'u-1', attributes: {} });
    await app.projected();
    const reply = await app.get<{ events: TimelineEvent[] }>(path(acme, '/leads/u-1/events?limit=2'), admin);
    expect(reply.status, show(reply)).to.equal(200);
    expect(reply.body.events.map((e) => e.eventTimeUtc)).to.deep.equal(['2024-01-01T03:00:00.000000Z', '2024-01-01T02:00:00.000000Z']);
    requestError(await app.get(path(acme, '/leads/u-1/events?limit=0'), admin), 400);
  });
});

describe('leads read model: merges and bulk; products read model (e2e)', () => {
  mergeAndModelScenarios({});
});

describe('leads read model: merges and bulk; products read model, one event per projection batch (e2e)', () => {
  mergeAndModelScenarios({ projectionBatchSize: 1 });
});
