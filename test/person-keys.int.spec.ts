import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createAccount } from '../src/accounts/accounts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { PersonKeys, type OpeningKey, type SealingKey } from '../src/eventstore/person-keys.js';
import { eraseKeys } from '../src/eventstore/person-keys-sql.js';
import { databaseText } from './support/database-text.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { eventually } from './support/eventually.js';

/**
 * The keys of people (src/eventstore/person-keys.ts) on a real database: one current key per
 * person and account whichever process asks first, no deadlock between processes making keys of
 * the same new people, and an erasure that every process sees once its cache time is over.
 */
describe('person keys (int)', function () {
  this.timeout(60_000);
  let database: TestDatabase;
  /** Two pools: two service processes on the same database. */
  let pool: Pool;
  let otherPool: Pool;
  let accountId: string;
  let otherAccountId: string;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 4);
    otherPool = createPool(database.url, 4);
    accountId = (await createAccount(pool, 'acme')).id;
    otherAccountId = (await createAccount(pool, 'globex')).id;
  });
  afterEach(async () => {
    await pool.end();
    await otherPool.end();
    await database.drop();
  });

  const erase = async (account: string, persons: string[], erasureId: string): Promise<number> =>
    (await pool.query<{ erased: number }>(eraseKeys, [account, persons, erasureId])).rows[0]?.erased ?? -1;

  const rowsOf = async (account: string, person: string): Promise<{ key_id: number; key: Buffer | null; erasure_id: string | null; erased_at: Date | null }[]> =>
    (await pool.query('SELECT key_id, key, erasure_id, erased_at FROM person_keys WHERE account_id = $1 AND person_id = $2 ORDER BY key_id', [account, person])).rows;

  function keyOf(keys: Map<string, SealingKey>, person: string): SealingKey {
    const key = keys.get(person);
    if (!key) throw new Error(`no key for ${person}`);
    return key;
  }

  function openingKey(found: Map<number, OpeningKey>, id: number): OpeningKey {
    const key = found.get(id);
    if (!key) throw new Error(`nothing for key ${id}`);
    return key;
  }

  it('makes one key per person, the same on the next call, from another process, and apart per account', async () => {
    const keys = new PersonKeys(pool);
    // A person named twice in one call gets one key.
    const first = await keys.forSealing(accountId, ['u:ada', 'a:anon-1', 'u:ada']);
    expect([...first.keys()].toSorted()).to.deep.equal(['a:anon-1', 'u:ada']);
    const ada = keyOf(first, 'u:ada');
    expect(ada.key).to.have.length(32);
    expect(keyOf(first, 'a:anon-1').id).not.to.equal(ada.id);
    expect(keyOf(first, 'a:anon-1').key.equals(ada.key)).to.equal(false);

    const again = await keys.forSealing(accountId, ['u:ada']);
    expect(keyOf(again, 'u:ada')).to.deep.equal(ada);
    // Another process, with nothing cached, reads the key made by the first.
    const fromOther = await new PersonKeys(otherPool).forSealing(accountId, ['u:ada', 'a:anon-1']);
    expect(keyOf(fromOther, 'u:ada')).to.deep.equal(ada);
    expect(keyOf(fromOther, 'a:anon-1')).to.deep.equal(keyOf(first, 'a:anon-1'));
    expect(await rowsOf(accountId, 'u:ada')).to.have.length(1);

    // The same person id in another account is another person.
    const otherAccount = keyOf(await keys.forSealing(otherAccountId, ['u:ada']), 'u:ada');
    expect(otherAccount.id).not.to.equal(ada.id);
    expect(otherAccount.key.equals(ada.key)).to.equal(false);

    // Opening: the key, with the account it belongs to.
    const opened = openingKey(await new PersonKeys(otherPool).forOpening([ada.id, otherAccount.id]), ada.id);
    expect(opened).to.deep.equal({ accountId, key: ada.key });
  });

  it('never deadlocks when two processes make keys of the same new people in opposite orders at once, and both get the one key of each', async () => {
    const rounds = 50;
    const perRound = 20;
    // One of the two flushes its keys with the events (a transaction with synchronous_commit off), as over PostgreSQL.
    const left = new PersonKeys(pool);
    const right = new PersonKeys(otherPool, { flushedWithTheEvents: true });
    for (let round = 0; round < rounds; round += 1) {
      // Overlapping: left has p00..p19, right p05..p24, in the other order.
      const persons = Array.from({ length: perRound + 5 }, (_, i) => `u:round-${round}-p${String(i).padStart(2, '0')}`);
      const leftPersons = persons.slice(0, perRound);
      const rightPersons = persons.slice(5).toReversed();
      const [fromLeft, fromRight, fromLeftAgain] = await Promise.all([
        left.forSealing(accountId, leftPersons),
        right.forSealing(accountId, rightPersons),
        // A third asker in a shuffled order, through the first pool (another connection, no cache yet).
        new PersonKeys(pool).forSealing(accountId, [...persons].sort(() => Math.random() - 0.5)),
      ]);
      for (const person of persons) {
        const keys = [fromLeft.get(person), fromRight.get(person), fromLeftAgain.get(person)].filter((k) => k !== undefined);
        expect(keys.length, `${person}: keys returned`).to.be.at.least(2);
        for (const key of keys) expect(key, `round ${round}, ${person}: the same key for every asker`).to.deep.equal(keys[0]);
      }
    }
    const { rows } = await pool.query<{ person_id: string; keys: number }>(
      'SELECT person_id, count(*)::int AS keys FROM person_keys WHERE account_id = $1 GROUP BY person_id HAVING count(*) <> 1',
      [accountId],
    );
    expect(rows, 'persons with other than one key').to.deep.equal([]);
    const { rows: total } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM person_keys WHERE account_id = $1', [accountId]);
    expect(total[0]?.n).to.equal(rounds * (perRound + 5));
  });

  it('after an erasure: a fresh process reads the erasure’s mark, the key bytes are gone, and the person met again gets a new key', async () => {
    const keys = new PersonKeys(pool);
    const before = keyOf(await keys.forSealing(accountId, ['u:ada', 'u:bob']), 'u:ada');
    const bob = keyOf(await keys.forSealing(accountId, ['u:bob']), 'u:bob');
    const otherAccount = keyOf(await keys.forSealing(otherAccountId, ['u:ada']), 'u:ada');
    const erasureId = randomUUID();
    expect(await erase(accountId, ['u:ada'], erasureId)).to.equal(1);
    // Again: nothing left to erase.
    expect(await erase(accountId, ['u:ada'], erasureId)).to.equal(0);

    const [erasedRow] = await rowsOf(accountId, 'u:ada');
    expect(erasedRow?.key, 'the key bytes in person_keys').to.equal(null);
    expect(erasedRow?.erasure_id).to.equal(erasureId);
    expect(erasedRow?.erased_at).to.be.instanceOf(Date);
    const { rows: keyColumn } = await pool.query<{ key: Buffer | null }>('SELECT key FROM person_keys WHERE key_id = $1', [before.id]);
    expect(keyColumn).to.deep.equal([{ key: null }]);
    // Nowhere else in the database either.
    expect(await databaseText(pool)).not.to.contain(before.key.toString('hex'));

    const fresh = new PersonKeys(otherPool);
    const found = await fresh.forOpening([before.id, bob.id, otherAccount.id]);
    expect(openingKey(found, before.id)).to.deep.equal({ accountId, erased: { erasureId, erasedAt: (erasedRow?.erased_at as Date).toISOString() } });
    // Only that person of that account.
    expect(openingKey(found, bob.id)).to.deep.equal({ accountId, key: bob.key });
    expect(openingKey(found, otherAccount.id)).to.deep.equal({ accountId: otherAccountId, key: otherAccount.key });

    // The person comes back: a new key, not the old one.
    const after = keyOf(await fresh.forSealing(accountId, ['u:ada']), 'u:ada');
    expect(after.id).not.to.equal(before.id);
    expect(after.key.equals(before.key)).to.equal(false);
    expect(openingKey(await new PersonKeys(pool).forOpening([after.id]), after.id)).to.deep.equal({ accountId, key: after.key });
    const rows = await rowsOf(accountId, 'u:ada');
    expect(rows.map((r) => [r.key_id, r.key === null])).to.deep.equal([
      [before.id, true],
      [after.id, false],
    ]);
    // The old id stays erased for good.
    expect(openingKey(await new PersonKeys(pool).forOpening([before.id]), before.id)).to.have.property('erased');
  });

  it('reads a key id it does not know as erased, by no erasure', async () => {
    const found = await new PersonKeys(pool).forOpening([987_654_321]);
    expect(openingKey(found, 987_654_321)).to.deep.equal({ accountId: null, erased: { erasureId: null, erasedAt: null } });
  });

  it('a process keeps using the keys it read for its cache time, and sees the erasure once that time is over', async () => {
    const cacheMs = 300;
    const maker = new PersonKeys(pool);
    const made = keyOf(await maker.forSealing(accountId, ['a:visitor']), 'a:visitor');
    // Two processes that read the key before the erasure: one caching for a minute, one for 300 ms.
    const longCache = new PersonKeys(otherPool, { cacheMs: 60_000 });
    const shortCache = new PersonKeys(otherPool, { cacheMs });
    const readAt = Date.now();
    for (const keys of [shortCache, longCache]) {
      expect(openingKey(await keys.forOpening([made.id]), made.id)).to.deep.equal({ accountId, key: made.key });
      expect(keyOf(await keys.forSealing(accountId, ['a:visitor']), 'a:visitor')).to.deep.equal(made);
    }
    const erasureId = randomUUID();
    expect(await erase(accountId, ['a:visitor'], erasureId)).to.equal(1);

    // Within its cache time, the process still holds the key (why the erasure runner waits before it rebuilds).
    expect(openingKey(await longCache.forOpening([made.id]), made.id)).to.deep.equal({ accountId, key: made.key });
    expect(keyOf(await longCache.forSealing(accountId, ['a:visitor']), 'a:visitor')).to.deep.equal(made);

    const mark = await eventually(
      async () => {
        const key = openingKey(await shortCache.forOpening([made.id]), made.id);
        return 'erased' in key ? key : undefined;
      },
      10_000,
      () => `a process caching keys for ${cacheMs} ms never saw the erasure`,
    );
    expect(Date.now() - readAt, 'seen once the cache time since the read is over').to.be.at.least(cacheMs);
    expect(mark).to.deep.include({ accountId });
    expect('erased' in mark && mark.erased.erasureId).to.equal(erasureId);
    // And it seals the person's new events with a new key.
    const renewed = keyOf(await shortCache.forSealing(accountId, ['a:visitor']), 'a:visitor');
    expect(renewed.id).not.to.equal(made.id);
    expect(keyOf(await new PersonKeys(pool).forSealing(accountId, ['a:visitor']), 'a:visitor')).to.deep.equal(renewed);
  });
});
