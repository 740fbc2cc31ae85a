import { expect } from 'chai';
import { createAccount } from '../src/accounts/accounts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import type { AccountRefs } from '../src/eventstore/events.js';
import { Pseudonyms } from '../src/eventstore/pseudonyms.js';
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

  /** The current key of a person (`u:<ref>`) of an account, made when the person's merge was claimed. */
  const keyIdOf = async (account: string, person: string): Promise<number> => {
    const { rows } = await pool.query<{ key_id: number }>('SELECT key_id FROM person_keys WHERE account_id = $1 AND person_id = $2 AND erased_at IS NULL', [account, person]);
    expect(rows, `the key of ${person}`).to.have.length(1);
    return rows[0]?.key_id as number;
  };

  it('the identity map: an anonymous id is claimed by one user for good, a repeat gets the first merge event id and key', async () => {
    const identities = new IdentityMap(pool);
    const pseudonyms = new Pseudonyms(pool);
    const refs = await pseudonyms.of(accountId);
    const otherRefs = await pseudonyms.of(otherAccountId);
    const eventId = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    const first = await identities.claim(refs, 'a-1', 'u-1', eventId(1));
    // The merge is sealed with the anonymous id's key, the profile that makes it with the user's: both made by the claim.
    const keyId = await keyIdOf(accountId, `a:${refs.anonymous('a-1')}`);
    const userKeyId = await keyIdOf(accountId, `u:${refs.user('u-1')}`);
    expect(keyId).to.be.a('number').and.not.to.equal(userKeyId);
    expect(first).to.deep.equal({ ok: true, mergeEventId: eventId(1), sealingKeyId: keyId, profileKeyId: userKeyId, fresh: true });
    expect(await identities.claim(refs, 'a-1', 'u-1', eventId(2))).to.deep.equal({ ok: true, mergeEventId: eventId(1), sealingKeyId: keyId, profileKeyId: userKeyId, fresh: false });
    expect(await identities.claim(refs, 'a-1', 'u-2', eventId(3))).to.deep.equal({ ok: false, mergedInto: 'u-1' });
    // Another account's anonymous id of the same name is another person, with another key.
    const other = await identities.claim(otherRefs, 'a-1', 'u-2', eventId(4));
    const otherKeyId = await keyIdOf(otherAccountId, `a:${otherRefs.anonymous('a-1')}`);
    expect(otherKeyId).not.to.equal(keyId);
    expect(other).to.deep.equal({ ok: true, mergeEventId: eventId(4), sealingKeyId: otherKeyId, profileKeyId: await keyIdOf(otherAccountId, `u:${otherRefs.user('u-2')}`), fresh: true });
    // Kept by the ids' pseudonyms, under each account's key; the ids beside them until their person is erased.
    const { rows } = await pool.query('SELECT account_id, anonymous_ref, user_ref, anonymous_id, user_id, merge_event_id, merge_key_id FROM identity_merges ORDER BY merge_event_id');
    expect(rows).to.deep.equal([
      { account_id: accountId, anonymous_ref: refs.anonymous('a-1'), user_ref: refs.user('u-1'), anonymous_id: 'a-1', user_id: 'u-1', merge_event_id: eventId(1), merge_key_id: keyId },
      { account_id: otherAccountId, anonymous_ref: otherRefs.anonymous('a-1'), user_ref: otherRefs.user('u-2'), anonymous_id: 'a-1', user_id: 'u-2', merge_event_id: eventId(4), merge_key_id: otherKeyId },
    ]);
    expect(refs.anonymous('a-1')).not.to.equal(otherRefs.anonymous('a-1'));
  });

  it('the identity map: a merge whose ids were erased (kept by pseudonym only) still holds its anonymous id, and names no user it went to', async () => {
    const identities = new IdentityMap(pool);
    const refs = await new Pseudonyms(pool).of(accountId);
    const eventId = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    await identities.claim(refs, 'a-1', 'u-1', eventId(1));
    await pool.query('UPDATE identity_merges SET anonymous_id = NULL, user_id = NULL WHERE account_id = $1', [accountId]);
    expect(await identities.claim(refs, 'a-1', 'u-2', eventId(2))).to.deep.equal({ ok: false, mergedInto: null });
    const keyId = await keyIdOf(accountId, `a:${refs.anonymous('a-1')}`);
    const userKeyId = await keyIdOf(accountId, `u:${refs.user('u-1')}`);
    expect(await identities.claim(refs, 'a-1', 'u-1', eventId(3))).to.deep.equal({ ok: true, mergeEventId: eventId(1), sealingKeyId: keyId, profileKeyId: userKeyId, fresh: false });
  });

  it(`the identity map: a user takes at most ${maxMergedIdsPerUser} anonymous ids, the repeat of a merge it holds still succeeds, other users are not affected`, async () => {
    const identities = new IdentityMap(pool);
    const pseudonyms = new Pseudonyms(pool);
    const refs: AccountRefs = await pseudonyms.of(accountId);
    const otherRefs: AccountRefs = await pseudonyms.of(otherAccountId);
    const eventId = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    // The user's merges but one, stored as claims store them (before merges had keys: merge_key_id null).
    const held = Array.from({ length: maxMergedIdsPerUser - 1 }, (_, i) => `a-${i + 1}`);
    await pool.query(
      `INSERT INTO identity_merges (account_id, anonymous_ref, user_ref, anonymous_id, user_id, merge_event_id)
       SELECT $1, a.ref, $3, a.id, 'u-1', ('00000000-0000-4000-8000-' || lpad(a.n::text, 12, '0'))::uuid
       FROM unnest($2::text[], $4::text[]) WITH ORDINALITY AS a(ref, id, n)`,
      [accountId, held.map((id) => refs.anonymous(id)), refs.user('u-1'), held],
    );
    const last = await identities.claim(refs, 'a-last', 'u-1', eventId(100_000));
    const userKeyId = await keyIdOf(accountId, `u:${refs.user('u-1')}`);
    expect(last).to.deep.equal({ ok: true, mergeEventId: eventId(100_000), sealingKeyId: await keyIdOf(accountId, `a:${refs.anonymous('a-last')}`), profileKeyId: userKeyId, fresh: true });
    expect(await identities.claim(refs, 'a-one-more', 'u-1', eventId(100_001))).to.deep.equal({ ok: false, full: true });
    // The repeat of a merge stored before keys: its first event id, no key.
    expect(await identities.claim(refs, 'a-1', 'u-1', eventId(100_002))).to.deep.equal({ ok: true, mergeEventId: eventId(1), sealingKeyId: null, profileKeyId: userKeyId, fresh: false });
    const two = await identities.claim(refs, 'a-one-more', 'u-2', eventId(100_003));
    expect(two).to.deep.equal({
      ok: true,
      mergeEventId: eventId(100_003),
      sealingKeyId: await keyIdOf(accountId, `a:${refs.anonymous('a-one-more')}`),
      profileKeyId: await keyIdOf(accountId, `u:${refs.user('u-2')}`),
      fresh: true,
    });
    const other = await identities.claim(otherRefs, 'a-two', 'u-1', eventId(100_004));
    expect(other).to.deep.equal({
      ok: true,
      mergeEventId: eventId(100_004),
      sealingKeyId: await keyIdOf(otherAccountId, `a:${otherRefs.anonymous('a-two')}`),
      profileKeyId: await keyIdOf(otherAccountId, `u:${otherRefs.user('u-1')}`),
      fresh: true,
    });
  });
});
