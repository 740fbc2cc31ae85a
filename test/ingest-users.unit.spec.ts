import { expect } from 'chai';
import { ingestUsers } from '../src/ingest/users.js';
import { streams } from '../src/eventstore/events.js';
import { requestContext, testRefs, userDoubles } from './support/ingest-doubles.js';

/** Stream names as the service makes them: by the pseudonyms of the ids. */
const refs = testRefs('acc-1');
const userStream = (userId: string): string => streams.user('acc-1', refs.user(userId));

/** The ingest decisions of users and users/bulk, on in-memory doubles of the registry, identity map and store. */
describe('users command (unit)', () => {
  it('stores a UserUpserted on the user stream, with the instants of the date-times sent', async () => {
    const deps = userDoubles();
    const ctx = requestContext('acc-1');
    const results = await ingestUsers(deps, ctx, [
      { userId: 'u-1', email: 'ann@example.com', birth_date: '1990-05-01T00:00:00+0200', attributes: { plan: 'gold', last_login: '2024-01-01T10:00:00Z' } },
    ]);
    expect(results).to.deep.equal([{ status: 'queued', trackID: ctx.trackIds(0) }]);
    expect(deps.store.events).to.deep.equal([
      {
        id: ctx.trackIds(0),
        stream: userStream('u-1'),
        type: 'UserUpserted',
        data: {
          userId: 'u-1',
          profile: { email: 'ann@example.com', birth_date: '1990-05-01T00:00:00+0200' },
          attributes: { plan: 'gold', last_login: '2024-01-01T10:00:00Z' },
          attributeTypes: { plan: 'string', last_login: 'datetime' },
          instants: { birth_date: '1990-04-30T22:00:00.000Z', 'attributes.last_login': '2024-01-01T10:00:00.000Z' },
        },
        metadata: { trackId: ctx.trackIds(0), accountId: 'acc-1', receivedAt: ctx.receivedAt, schemaVersion: 1 },
      },
    ]);
  });

  it('rejects a user whose attribute type conflicts with the registered one, naming both types, and stores nothing for it', async () => {
    const deps = userDoubles();
    deps.registry.registerElsewhere('acc-1', 'plan', 'number');
    const results = await ingestUsers(deps, requestContext('acc-1'), [{ userId: 'u-1', attributes: { plan: 'gold' } }]);
    expect(results).to.deep.equal([{ status: 'error', reason: 'attribute_type', field: 'attributes', message: "attribute 'plan' is registered as number and cannot be sent as string" }]);
    expect(deps.store.events).to.deep.equal([]);
  });

  it('in a bulk, the first accepted user that sends a new key decides its type', async () => {
    const deps = userDoubles();
    const results = await ingestUsers(deps, requestContext('acc-1'), [
      { userId: 'u-1', attributes: { plan: 3 } },
      { userId: 'u-2', attributes: { plan: 'gold' } },
      { userId: 'u-3', attributes: { plan: 4 } },
    ]);
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'error', 'queued']);
    expect(results[1]).to.include({ message: "attribute 'plan' is registered as number and cannot be sent as string" });
    expect(deps.registry.types.get('acc-1')).to.deep.equal(new Map([['plan', 'number']]));
  });

  it('a user rejected for another reason decides no type for later users', async () => {
    const deps = userDoubles();
    const results = await ingestUsers(deps, requestContext('acc-1'), [
      { userId: 'null', attributes: { plan: 3 } },
      { userId: 'u-2', attributes: { plan: 'gold' } },
    ]);
    expect(results.map((r) => r.status)).to.deep.equal(['error', 'queued']);
    expect(deps.registry.types.get('acc-1')).to.deep.equal(new Map([['plan', 'string']]));
  });

  it('a user whose merge is refused decides no type and stores nothing', async () => {
    const deps = userDoubles();
    await ingestUsers(deps, requestContext('acc-1'), [{ userId: 'u-1', anonymousId: 'a-1', attributes: {} }]);
    deps.store.events.length = 0;
    const results = await ingestUsers(deps, requestContext('acc-1'), [
      { userId: 'u-2', anonymousId: 'a-1', attributes: { plan: 3 } },
      { userId: 'u-3', attributes: { plan: 'gold' } },
    ]);
    expect(results[0]).to.deep.equal({
      status: 'error',
      reason: 'merge_conflict',
      field: 'anonymousId',
      message: "anonymousId 'a-1' is already merged into userId 'u-1' and cannot be merged into 'u-2'",
    });
    expect(results[1]?.status).to.equal('queued');
    expect(deps.registry.types.get('acc-1')).to.deep.equal(new Map([['plan', 'string']]));
    expect(deps.store.events.map((e) => e.stream)).to.deep.equal([userStream('u-3')]);
  });

  it('a merge stores the UserUpserted, then ProfilesMerged on the known user stream; a repeat reuses the first merge event id', async () => {
    const deps = userDoubles();
    const first = requestContext('acc-1');
    await ingestUsers(deps, first, [{ userId: 'u-1', anonymousId: 'a-1', attributes: {} }]);
    await ingestUsers(deps, requestContext('acc-1'), [{ userId: 'u-1', anonymousId: 'a-1', attributes: {} }]);
    const merges = deps.store.events.filter((e) => e.type === 'ProfilesMerged');
    expect(deps.store.events.map((e) => e.type)).to.deep.equal(['UserUpserted', 'ProfilesMerged', 'UserUpserted', 'ProfilesMerged']);
    expect(merges.map((e) => e.data)).to.deep.equal([
      { userId: 'u-1', anonymousId: 'a-1' },
      { userId: 'u-1', anonymousId: 'a-1' },
    ]);
    expect(merges[0]?.id).to.equal(merges[1]?.id);
    expect(merges.map((e) => [e.stream, e.metadata.trackId])).to.deep.equal([
      [userStream('u-1'), first.trackIds(0)],
      [userStream('u-1'), deps.store.events[2]?.id],
    ]);
  });

  it('loses a new key claimed meanwhile by a concurrent request with another type', async () => {
    const deps = userDoubles();
    const claim = deps.registry.claim.bind(deps.registry);
    deps.registry.claim = (accountId, pending) => {
      deps.registry.registerElsewhere(accountId, 'plan', 'boolean');
      return claim(accountId, pending);
    };
    const results = await ingestUsers(deps, requestContext('acc-1'), [{ userId: 'u-1', attributes: { plan: 'gold' } }]);
    expect(results).to.deep.equal([{ status: 'error', reason: 'attribute_type', field: 'attributes', message: "attribute 'plan' is registered as boolean and cannot be sent as string" }]);
    expect(deps.store.events).to.deep.equal([]);
  });

  it('an anonymous user goes to the anonymous stream', async () => {
    const deps = userDoubles();
    await ingestUsers(deps, requestContext('acc-1'), [{ anonymousId: 'a-9', attributes: {} }]);
    const [event] = deps.store.events;
    expect(event?.stream).to.equal(streams.anonymous('acc-1', refs.anonymous('a-9')));
    // Narrowing on the type gives the data's type: no cast.
    if (event?.type !== 'UserUpserted') throw new Error('expected a UserUpserted');
    expect(event.data.anonymousId).to.equal('a-9');
    expect(event.data.userId).to.equal(undefined);
  });

  it('refuses a user the schema refuses, and one with an impossible date attribute, naming the field; types booleans as boolean', async () => {
    const deps = userDoubles();
    const results = await ingestUsers(deps, requestContext('acc-1'), [
      { userId: 'u-1', attributes: { plan: 'gold' }, extra: 1 },
      { userId: 'u-2', attributes: { renewed: '2024-02-30T00:00:00' } },
      { userId: 'u-3', attributes: { vip: true } },
    ]);
    expect(results.slice(0, 2)).to.deep.equal([
      { status: 'error', reason: 'schema', field: 'unknown field', message: "unknown field 'extra'" },
      {
        status: 'error',
        reason: 'datetime',
        field: 'attributes',
        message:
          "attributes.renewed must be an ISO 8601 date-time such as 2024-05-01T12:30:00, 2024-05-01T12:30:00.123456+0200 or 2024-05-01T12:30:00Z, not '2024-02-30T00:00:00'",
      },
    ]);
    expect(results[2]?.status).to.equal('queued');
    expect(deps.registry.types.get('acc-1')).to.deep.equal(new Map([['vip', 'boolean']]));
  });
});
