import { createHmac, randomBytes } from 'node:crypto';
import type { Pool } from '../db/pool.js';

/**
 * Pseudonyms of people's ids (docs/decisions.md, Erasure: ids kept as pseudonyms): wherever the
 * service keys something by a person for good (stream names, the ids readable in stored events,
 * person keys, the identity map, suppression and erasure records), it uses a keyed hash of the
 * id, never the id. The key is the account's, kept in PostgreSQL (account_id_keys) apart from the
 * events, so no one can read an id from the store; the service, given an id, can still find what
 * was kept of it (an auditor proving an erasure).
 */

let nextSerial = 0;

/** The ids of one account as pseudonyms: HMAC-SHA-256 under the account's key, 128 bits, base64url. */
export class IdRefs {
  /** This key's own part of the memo of recent pseudonyms: another key, even of the same account, shares none of it. */
  private readonly memoPrefix = `${(nextSerial += 1)}\n`;

  constructor(
    readonly accountId: string,
    private readonly key: Buffer,
  ) {}

  user(userId: string): string {
    return this.ref('u', userId);
  }

  anonymous(anonymousId: string): string {
    return this.ref('a', anonymousId);
  }

  private ref(kind: 'u' | 'a', id: string): string {
    const memoKey = `${this.memoPrefix}${kind}\n${id}`;
    const known = recent.get(memoKey);
    if (known !== undefined) return known;
    const ref = createHmac('sha256', this.key).update(`${kind}\n${id}`).digest().subarray(0, 16).toString('base64url');
    recent.set(memoKey, ref);
    return ref;
  }
}

/**
 * The pseudonyms computed last in this process: an HMAC takes about 5 us, and an item needs its
 * ids' twice (its stream, then its box's readable pseudonyms), a known person's again with every
 * item. Two generations of `generation` entries (about 150 bytes each): the young one fills, then
 * replaces the old one whole, so that no entry is evicted one by one.
 */
class RecentRefs {
  private young = new Map<string, string>();
  private old = new Map<string, string>();

  constructor(private readonly generation: number) {}

  get(key: string): string | undefined {
    return this.young.get(key) ?? this.old.get(key);
  }

  set(key: string, ref: string): void {
    if (this.young.size >= this.generation) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, ref);
  }
}

const recent = new RecentRefs(10_000);

/** Makes the account's key if it has none, and returns its key. */
const ensureKey = `
WITH made AS (
  INSERT INTO account_id_keys (account_id, key) VALUES ($1, $2)
  ON CONFLICT (account_id) DO NOTHING
  RETURNING key
)
SELECT key FROM made UNION ALL SELECT key FROM account_id_keys WHERE account_id = $1`;

const keyOf = 'SELECT key FROM account_id_keys WHERE account_id = $1';

/** Accounts whose key a process holds at most: 32 bytes and an id each. */
const maxAccounts = 50_000;

/** The pseudonym keys of accounts, made when first wanted and held for good (a key never changes). */
export class Pseudonyms {
  private readonly held = new Map<string, Promise<IdRefs>>();

  constructor(private readonly pool: Pool) {}

  of(accountId: string): Promise<IdRefs> {
    const held = this.held.get(accountId);
    if (held) return held;
    const read = this.pool.query<{ key: Buffer }>(ensureKey, [accountId, randomBytes(32)]).then(async ({ rows }) => {
      // A key made by another process meanwhile is in neither part of ensureKey: read again.
      const key = rows[0]?.key ?? (await this.pool.query<{ key: Buffer }>(keyOf, [accountId])).rows[0]?.key;
      if (!key) throw new Error('the account has no key for its ids');
      return new IdRefs(accountId, key);
    });
    if (this.held.size >= maxAccounts) this.held.delete(this.held.keys().next().value as string);
    this.held.set(accountId, read);
    read.catch(() => {
      if (this.held.get(accountId) === read) this.held.delete(accountId);
    });
    return read;
  }
}
