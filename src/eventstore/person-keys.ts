import type { Pool } from '../db/pool.js';
import { inOneRoundTrip } from '../db/transaction.js';
import { ExpiringCache } from '../expiring-cache.js';
import { GroupCommitter } from './group-commit.js';
import type { ErasedMark } from './port.js';
import * as sql from './person-keys-sql.js';
import { newKey, type PersonId } from './sealing.js';

/** A person's key to seal new events with. */
export interface SealingKey {
  id: number;
  key: Buffer;
}

/** A key as a reader finds it: the key, or the mark of the erasure that removed it. */
export type OpeningKey = { accountId: string; key: Buffer } | { accountId: string | null; erased: ErasedMark };

/**
 * How long a process may go on using a key it read (src/erasure/runner.ts waits this long, and a
 * little more, after erasing keys before it rebuilds: by then no process holds them).
 */
export const keyCacheMs = 5_000;

/** Keys held at most per cache: a key and its ids take about 200 bytes, so a few MB. */
const maxCachedKeys = 20_000;

export interface PersonKeysOptions {
  /** How long a key read is used before it is read again; default keyCacheMs. */
  cacheMs?: number;
  /**
   * true where the events are in the same PostgreSQL as the keys: a key's commit need not wait for
   * its flush, since the append that uses it commits after it and flushes it with its own (the
   * WAL is one sequence). false where the events go elsewhere (EventStoreDB): a key must be durable
   * before an event sealed with it is.
   */
  flushedWithTheEvents?: boolean;
}

/** The keys of people, kept in PostgreSQL (person_keys) and cached for a few seconds per process. */
export class PersonKeys {
  private readonly sealing: ExpiringCache<string, SealingKey>;
  private readonly opening: ExpiringCache<number, OpeningKey>;
  private readonly cacheMs: number;
  /** Keys wanted by requests at the same time are made together, in one transaction. */
  private readonly maker: GroupCommitter<KeysWanted, KeyRow[]>;

  constructor(
    private readonly pool: Pool,
    private readonly options: PersonKeysOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? keyCacheMs;
    this.sealing = new ExpiringCache(this.cacheMs, maxCachedKeys);
    this.opening = new ExpiringCache(this.cacheMs, maxCachedKeys);
    this.maker = new GroupCommitter({
      flush: async (units) => {
        const rows = new Map((await this.ensure(units)).map((row) => [`${row.account_id}/${row.person_id}`, row]));
        return units.map((unit) => ({ status: 'fulfilled', value: unit.persons.flatMap((person) => rows.get(`${unit.accountId}/${person}`) ?? []) }));
      },
      sizeOf: (unit) => unit.persons.length,
      maxBatchSize: 1_000,
      maxConcurrentFlushes: 2,
    });
  }

  /** The current key of each person of an account, made for those who have none. */
  async forSealing(accountId: string, persons: readonly PersonId[]): Promise<Map<PersonId, SealingKey>> {
    const found = new Map<PersonId, SealingKey>();
    const missing: PersonId[] = [];
    for (const person of new Set(persons)) {
      const cached = this.sealing.get(`${accountId}/${person}`);
      if (cached) found.set(person, cached);
      else missing.push(person);
    }
    if (missing.length === 0) return found;
    let rows = await this.maker.submit({ accountId, persons: missing });
    for (const row of rows) found.set(row.person_id, { id: row.key_id, key: row.key });
    const raced = missing.filter((person) => !found.has(person));
    if (raced.length > 0) {
      rows = (await this.pool.query<KeyRow>(sql.currentKeys, [accountId, raced])).rows;
      for (const row of rows) found.set(row.person_id, { id: row.key_id, key: row.key });
    }
    for (const person of missing) {
      const key = found.get(person);
      if (!key) throw new Error('a person key could not be made');
      this.sealing.set(`${accountId}/${person}`, key);
      this.opening.set(key.id, { accountId, key: key.key });
    }
    return found;
  }

  /** The keys of these ids, or how they were erased. */
  async forOpening(keyIds: readonly number[]): Promise<Map<number, OpeningKey>> {
    const found = new Map<number, OpeningKey>();
    const missing: number[] = [];
    for (const id of new Set(keyIds)) {
      const cached = this.opening.get(id);
      if (cached) found.set(id, cached);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const { rows } = await this.pool.query<{ key_id: number; account_id: string; key: Buffer | null; erasure_id: string | null; erased_at: Date | null }>(
      sql.keysById,
      [missing],
    );
    for (const row of rows) {
      const opening: OpeningKey = row.key
        ? { accountId: row.account_id, key: row.key }
        : { accountId: row.account_id, erased: { erasureId: row.erasure_id, erasedAt: row.erased_at?.toISOString() ?? null } };
      found.set(row.key_id, opening);
      // An erasure is for good: its mark may be kept as long as the cache has room.
      this.opening.set(row.key_id, opening, row.key ? this.cacheMs : 24 * 60 * 60 * 1000);
    }
    // No such key (a box made up, or keys lost with a database restored without them): unreadable.
    for (const id of missing) if (!found.has(id)) found.set(id, { accountId: null, erased: { erasureId: null, erasedAt: null } });
    return found;
  }

  private async ensure(units: readonly KeysWanted[]): Promise<KeyRow[]> {
    const wanted = new Map<string, { accountId: string; personId: string; key: Buffer }>();
    for (const { accountId, persons } of units) for (const personId of persons) wanted.set(`${accountId}/${personId}`, { accountId, personId, key: newKey() });
    const list = [...wanted.values()];
    if (this.options.flushedWithTheEvents !== true) {
      return (await this.pool.query<KeyRow>(sql.ensureKeys, [list.map((w) => w.accountId), list.map((w) => w.personId), list.map((w) => w.key)])).rows;
    }
    // One round trip for the transaction and its setting: a session setting would outlive this use of the pooled connection.
    return inOneRoundTrip<KeyRow>(this.pool, ['SET LOCAL synchronous_commit = off'], sql.ensureKeysWithValues(list));
  }
}

interface KeyRow {
  key_id: number;
  account_id: string;
  person_id: string;
  key: Buffer;
}

/** The people of one account whose keys a request needs and no cache held. */
interface KeysWanted {
  accountId: string;
  persons: PersonId[];
}
