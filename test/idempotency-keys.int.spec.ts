import { expect } from 'chai';
import { createAccount } from '../src/accounts/accounts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { AppError } from '../src/errors.js';
import { ingestRefusalReply } from '../src/http/errors.js';
import { IdempotencyKeys } from '../src/ingest/idempotency.js';
import { IdentityMap, maxMergedIdsPerUser } from '../src/ingest/identity-map.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

/** Idempotency-Keys and the identity map on a real database (docs/decisions.md, Idempotency; Users). */
describe('idempotency keys and the identity map (int)', () => {
  let database: TestDatabase;
  let pool: Pool;
  let keys: IdempotencyKeys;
  let accountId: string;
  let otherAccountId: string;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 4);
    keys = new IdempotencyKeys(pool);
    accountId = (await createAccount(pool, 'acme')).id;
    otherAccountId = (await createAccount(pool, 'other')).id;
  });
  afterEach(async () => {
    await pool.end();
    await database.drop();
  });

  /** The reply the service gives for what `work` refused with. */
  const refusal = async (work: Promise<unknown>): Promise<AppError> => {
    const error = await work.then(() => null, (e: unknown) => e);
    const reply = ingestRefusalReply(error);
    expect(reply).to.be.instanceOf(AppError);
    return reply as AppError;
  };
  const ageWindows = (hours: number) => pool.query(`UPDATE idempotency_keys SET window_start = window_start - make_interval(hours => $1)`, [hours]);

  it('a key of 1 to 255 characters; an empty or longer one is refused with 400 naming the header', async () => {
    for (const key of ['k', 'k'.repeat(255)]) await keys.open(accountId, 'events', key, {});
    for (const key of ['', 'k'.repeat(256)]) {
      const error = await refusal(keys.open(accountId, 'events', key, {}));
      expect([error.status, error.form, error.message]).to.deep.equal([400, 'request', 'Idempotency-Key must be 1 to 255 characters']);
    }
  });

  it('the same account, endpoint, key and element give the same trackID; any other of them another one', async () => {
    const body = [{ userId: 'u-1' }];
    const first = await keys.open(accountId, 'events/bulk', 'order-1', body);
    const repeat = await keys.open(accountId, 'events/bulk', 'order-1', body);
    expect(repeat.trackIds(0)).to.equal(first.trackIds(0));
    expect(repeat.trackIds(1)).to.equal(first.trackIds(1));
    const ids = [
      first.trackIds(0),
      first.trackIds(1),
      (await keys.open(accountId, 'events/bulk', 'order-2', body)).trackIds(0),
      (await keys.open(accountId, 'users/bulk', 'order-1', body)).trackIds(0),
      (await keys.open(otherAccountId, 'events/bulk', 'order-1', body)).trackIds(0),
    ];
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of ids) expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('another body with the key gets 422 within the window; the recorded reply is replayed, once recorded', async () => {
    const first = await keys.open(accountId, 'events', 'k1', { eventName: 'a' });
    expect(first.recordedReply).to.equal(null);
    const error = await refusal(keys.open(accountId, 'events', 'k1', { eventName: 'b' }));
    expect([error.status, error.reason]).to.deep.equal([422, 'idempotency_mismatch']);
    expect(error.message).to.equal('this Idempotency-Key was used with another body in the last 24 hours');
    await first.record({ response: { status: 'queued', trackID: first.trackIds(0) } });
    // A second record does not overwrite the first reply.
    await first.record({ response: 'other' });
    const repeat = await keys.open(accountId, 'events', 'k1', { eventName: 'a' });
    expect(repeat.recordedReply).to.deep.equal({ response: { status: 'queued', trackID: first.trackIds(0) } });
  });

  it('a released key is free for another body; a key with a recorded reply is not released', async () => {
    const first = await keys.open(accountId, 'events', 'k1', { eventName: 'a' });
    await first.release();
    const corrected = await keys.open(accountId, 'events', 'k1', { eventName: 'b' });
    await corrected.record({ ok: true });
    await corrected.release();
    await refusal(keys.open(accountId, 'events', 'k1', { eventName: 'c' }));
  });

  it('after 24 hours a key starts a new window: new trackIDs, no reply, any body; forgetExpired deletes only such keys', async () => {
    const first = await keys.open(accountId, 'events', 'k1', { eventName: 'a' });
    await first.record({ ok: true });
    await keys.open(accountId, 'events', 'k2', {});
    await ageWindows(23);
    expect((await keys.open(accountId, 'events', 'k1', { eventName: 'a' })).recordedReply, 'within the window').to.deep.equal({ ok: true });
    expect(await keys.forgetExpired()).to.equal(0);
    await ageWindows(2);
    const later = await keys.open(accountId, 'events', 'k1', { eventName: 'other' });
    const again = await keys.open(accountId, 'events', 'k1', { eventName: 'other' });
    expect(later.recordedReply).to.equal(null);
    // The new window's trackIDs: new, and the same for a repeat within it.
    expect(later.trackIds(0)).to.not.equal(first.trackIds(0));
    expect(again.trackIds(0)).to.equal(later.trackIds(0));
    // k2 is past its window; k1 started a new one just now.
    expect(await keys.forgetExpired()).to.equal(1);
    const { rows } = await pool.query<{ key: string }>('SELECT key FROM idempotency_keys');
    expect(rows.map((r) => r.key)).to.deep.equal(['k1']);
  });

  it('the identity map: an anonymous id is claimed by one user for good, a repeat gets the first merge event id', async () => {
    const identities = new IdentityMap(pool);
    const eventId = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    expect(await identities.claim(accountId, 'a-1', 'u-1', eventId(1))).to.deep.equal({ ok: true, mergeEventId: eventId(1) });
    expect(await identities.claim(accountId, 'a-1', 'u-1', eventId(2))).to.deep.equal({ ok: true, mergeEventId: eventId(1) });
    expect(await identities.claim(accountId, 'a-1', 'u-2', eventId(3))).to.deep.equal({ ok: false, mergedInto: 'u-1' });
    // Another account's anonymous id of the same name is another person.
    expect(await identities.claim(otherAccountId, 'a-1', 'u-2', eventId(4))).to.deep.equal({ ok: true, mergeEventId: eventId(4) });
  });

  it(`the identity map: a user takes at most ${maxMergedIdsPerUser} anonymous ids, the repeat of a merge it holds still succeeds, other users are not affected`, async () => {
    const identities = new IdentityMap(pool);
    const eventId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    await pool.query(
      `INSERT INTO identity_merges (account_id, anonymous_id, user_id, merge_event_id)
       SELECT $1, 'a-' || n, 'u-1', ('00000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid FROM generate_series(1, $2::int - 1) n`,
      [accountId, maxMergedIdsPerUser],
    );
    expect(await identities.claim(accountId, 'a-last', 'u-1', eventId(100_000))).to.deep.equal({ ok: true, mergeEventId: eventId(100_000) });
    expect(await identities.claim(accountId, 'a-one-more', 'u-1', eventId(100_001))).to.deep.equal({ ok: false, full: true });
    expect(await identities.claim(accountId, 'a-1', 'u-1', eventId(100_002))).to.deep.equal({ ok: true, mergeEventId: eventId(1) });
    expect(await identities.claim(accountId, 'a-one-more', 'u-2', eventId(100_003))).to.deep.equal({ ok: true, mergeEventId: eventId(100_003) });
    expect(await identities.claim(otherAccountId, 'a-two', 'u-1', eventId(100_004))).to.deep.equal({ ok: true, mergeEventId: eventId(100_004) });
  });
});
