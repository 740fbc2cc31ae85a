import { expect } from 'chai';
import { maxMergedIdsPerUser } from '../../src/ingest/identity-map.js';
import { eventStoreUnderTest, servedApp, TestApp, type Credentials, type Reply } from '../support/app.js';
import { accountRefs } from '../support/id-refs.js';
import { eventsOfType, itemError, queued, storesNothing } from '../support/replies.js';

describe('users: system and custom attributes (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started), { scope: 'suite' });

  const user = (fields: Record<string, unknown>, attributes: unknown = {}): Record<string, unknown> => ({ userId: 'u-1', ...fields, attributes });
  const rejected = (body: unknown): Promise<string> => storesNothing(app, async () => itemError(await app.ingest(account, 'users', body)));

  it('accepts system attributes of their docs/spec.md 2.2 types and stores them as sent', async () => {
    const profile = { children: 2, opt_in_sms: false, opt_in_email: true, birth_date: '1990-05-01T00:00:00Z', points: 10, phone: '+4930123' };
    const trackID = queued(await app.ingest(account, 'users', user(profile)));
    const stored = (await app.events()).find((event) => event.event_id === trackID);
    expect(stored?.data.profile).to.deep.equal(profile);
  });

  const wrongSystemValues: [string, unknown][] = [
    ['children', 1.5],
    ['children', '3'],
    ['opt_in_sms', 'yes'],
    ['opt_in_sms', 1],
    ['birth_date', '1990-05-01'],
    ['birth_date', 'yesterday'],
    ['points', '10'],
  ];
  for (const [field, value] of wrongSystemValues) {
    it(`rejects ${field} = ${JSON.stringify(value)}, naming ${field}`, async () => {
      expect(await rejected(user({ [field]: value }))).to.contain(field);
    });
  }

  for (const key of ['Membership', 'membership-level', '1x']) {
    it(`rejects the custom attribute key '${key}', naming it`, async () => {
      expect(await rejected(user({}, { [key]: 'gold' }))).to.contain(key);
    });
  }

  it('accepts custom attribute values of type number, string, boolean and datetime', async () => {
    const attributes = { visits: 3, ratio: 0.5, plan: 'gold', vip: true, last_login: '2024-01-01T10:00:00Z' };
    const trackID = queued(await app.ingest(account, 'users', user({}, attributes)));
    const stored = (await app.events()).find((event) => event.event_id === trackID);
    expect(stored?.data.attributes).to.deep.equal(attributes);
  });

  for (const [label, value] of [['null', null], ['an array', ['a']], ['an object', { a: 1 }]] as const) {
    it(`rejects a custom attribute value that is ${label}, naming attributes.<key>`, async () => {
      expect(await rejected(user({}, { nickname: 'ok', favourite: value }))).to.contain('attributes.favourite');
    });
  }

  for (const [label, attributes] of [['a string', 'gold'], ['an array', [{ plan: 'gold' }]]] as const) {
    it(`rejects attributes given as ${label}, naming attributes`, async () => {
      expect(await rejected(user({}, attributes))).to.contain('attributes');
    });
  }
});

describe('users: the attribute type registry (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  const send = (attributes: Record<string, unknown>, userId = 'u-1', to = account): Promise<Reply> =>
    app.ingest(to, 'users', { userId, attributes });

  it('keeps the first type of a key: number then "34" is rejected naming the key and both types', async () => {
    queued(await send({ age: 33 }));
    const message = await storesNothing(app, async () => itemError(await send({ age: '34' }, 'u-2')));
    expect(message).to.contain('age').and.contain('number').and.contain('string');
    queued(await send({ age: 35 }, 'u-3'));
    expect(await eventsOfType(app, 'UserUpserted')).to.have.length(2);
  });

  it('registers a datetime-looking string as datetime and then rejects a plain string for that key', async () => {
    queued(await send({ renewal: '2024-05-01T12:30:00+0200' }));
    expect(await storesNothing(app, async () => itemError(await send({ renewal: 'next month' }, 'u-2')))).to.contain('renewal');
    queued(await send({ renewal: '2025-01-01T00:00:00Z' }, 'u-3'));
  });

  it('keeps a registry per account: another account may use the other type', async () => {
    const other = await app.account('other');
    queued(await send({ age: 33 }));
    queued(await send({ age: 'thirty-three' }, 'u-1', other));
    itemError(await send({ age: 'thirty-four' }, 'u-2'));
    itemError(await send({ age: 34 }, 'u-2', other));
  });

  it('registers nothing for a user rejected for a type conflict', async () => {
    queued(await send({ age: 33 }));
    itemError(await send({ age: '34', nickname: 'bob' }, 'u-2'));
    queued(await send({ nickname: 7 }, 'u-3'));
  });

  it('registers nothing for a user rejected for a merge conflict', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', anonymousId: 'anon-1', attributes: {} }));
    itemError(await app.ingest(account, 'users', { userId: 'u-2', anonymousId: 'anon-1', attributes: { tier: 'gold' } }));
    queued(await send({ tier: 3 }, 'u-3'));
  });

  it('lets exactly one type win when two processes see the first uses of a key at once', async () => {
    const second = await TestApp.start({}, { database: app.database });
    try {
      // Warm both processes (credentials cache, database and HTTP connections) so that the first uses really overlap.
      await Promise.all(
        [app, second].flatMap((via) => [
          ...Array.from({ length: 10 }, (_, i) => via.ingest(account, 'users', { userId: `warm-${i}`, attributes: {} })),
          ...Array.from({ length: 10 }, () => via.pool.query('SELECT pg_sleep(0.05)')),
        ]),
      );
      const sends = Array.from({ length: 20 }, (_, i) => ({ value: i % 2 === 0 ? 42 : 'high', via: i % 4 < 2 ? app : second }));
      const replies = await Promise.all(sends.map(({ value, via }, i) => via.ingest(account, 'users', { userId: `u-${i}`, attributes: { score: value } })));
      const accepted = new Set<string>();
      const refused = new Set<string>();
      replies.forEach((reply, i) => {
        const type = typeof sends[i]?.value;
        if (reply.status === 200) {
          queued(reply);
          accepted.add(type);
        } else {
          expect(itemError(reply)).to.contain('score');
          refused.add(type);
        }
      });
      expect([...accepted], 'types accepted').to.have.length(1);
      expect([...refused], 'types refused').to.have.length(1).and.not.include([...accepted][0]);
      const { rows } = await app.pool.query<{ type: string }>("SELECT type FROM attribute_types WHERE key = 'score'");
      expect(rows).to.have.length(1);
      expect(rows[0]?.type).to.equal([...accepted][0]);
      expect(await eventsOfType(app, 'UserUpserted')).to.have.length(20 + 10);
    } finally {
      await second.stop();
    }
  });
});

describe('users: merging an anonymous profile into a known user (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  servedApp((started) => ({ app, account } = started));

  const merge = (userId: string, anonymousId: string): Promise<Reply> => app.ingest(account, 'users', { userId, anonymousId, attributes: {} });

  it('stores UserUpserted and ProfilesMerged on the known user stream, the merge carrying the trackID', async () => {
    queued(await app.ingest(account, 'users', { anonymousId: 'anon-1', attributes: {} }));
    const trackID = queued(await merge('u-1', 'anon-1'));
    const [upsert] = (await eventsOfType(app, 'UserUpserted')).filter((e) => e.event_id === trackID);
    const merges = await eventsOfType(app, 'ProfilesMerged');
    expect(merges).to.have.length(1);
    const [merged] = merges;
    const refs = await accountRefs(app, account);
    expect(upsert?.stream_name).to.equal(`user-${refs.accountId}-${refs.user('u-1')}`);
    expect(merged?.stream_name).to.equal(upsert?.stream_name);
    expect(merged?.stream_position).to.be.greaterThan(upsert?.stream_position ?? Infinity);
    expect(merged?.event_id).not.to.equal(trackID);
    expect(merged?.event_id, 'a name-based (v5) id derived from the trackID').to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5/);
    expect(merged?.metadata.trackId).to.equal(trackID);
    expect(merged?.data).to.deep.include({ userId: 'u-1', anonymousId: 'anon-1' });
  });

  it('answers a repeated merge 200 without storing a second ProfilesMerged', async () => {
    queued(await merge('u-1', 'anon-1'));
    queued(await merge('u-1', 'anon-1'));
    const merges = await eventsOfType(app, 'ProfilesMerged');
    expect(new Set(merges.map((e) => e.event_id)).size).to.equal(1);
    // EventStoreDB deduplicates ids on a best-effort basis only: it may hold the id twice, which
    // projections apply once (leads.e2e). Postgres stores it once.
    if (eventStoreUnderTest === 'postgres') expect(merges).to.have.length(1);
    expect(await eventsOfType(app, 'UserUpserted')).to.have.length(2);
  });

  it('rejects merging the same anonymousId into another user, naming the anonymousId', async () => {
    queued(await merge('u-1', 'anon-1'));
    const message = await storesNothing(app, async () => itemError(await merge('u-2', 'anon-1')));
    expect(message).to.contain('anon-1');
    const merges = await eventsOfType(app, 'ProfilesMerged');
    expect(merges.map((e) => e.data.userId)).to.deep.equal(['u-1']);
  });

  it(`refuses a merge into a user already holding ${maxMergedIdsPerUser} anonymousIds, naming the user and the limit, and stores nothing of it`, async () => {
    // The first 999 merges as the identity map holds them; the service's own merges follow.
    const refs = await accountRefs(app, account);
    const held = Array.from({ length: maxMergedIdsPerUser - 1 }, (_, i) => `anon-${i + 1}`);
    await app.pool.query(
      `INSERT INTO identity_merges (account_id, anonymous_ref, user_ref, anonymous_id, user_id, merge_event_id)
       SELECT $1, a.ref, $3, a.id, 'u-1', gen_random_uuid() FROM unnest($2::text[], $4::text[]) AS a(ref, id)`,
      [refs.accountId, held.map((id) => refs.anonymous(id)), refs.user('u-1'), held],
    );
    queued(await merge('u-1', 'anon-last'));
    const message = await storesNothing(app, async () => itemError(await merge('u-1', 'anon-one-more')));
    expect(message).to.equal(`userId 'u-1' has 1,000 anonymousIds merged into it, as many as a user may take: anonymousId 'anon-one-more' cannot be merged into it`);
    // A merge the user holds is still a success, and another user takes the id.
    queued(await merge('u-1', 'anon-7'));
    queued(await merge('u-2', 'anon-one-more'));
  });
});
