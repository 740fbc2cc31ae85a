import type { Pool } from '../db/pool.js';
import { keyCacheMs } from '../eventstore/person-keys.js';
import { ExpiringCache } from '../expiring-cache.js';
import type { AccountRefs } from '../eventstore/events.js';
import { personIds } from '../eventstore/sealing.js';
import { rejected, type ItemResult } from './results.js';

/** The ids an account has suppressed (an erasure with suppress: true), as person ids of their pseudonyms. */
export type SuppressedSet = ReadonlySet<string>;

export interface SuppressionList {
  of(accountId: string): Promise<SuppressedSet>;
}

const suppressedOfAccount = 'SELECT person_id FROM suppressed_ids WHERE account_id = $1';

/** Accounts whose list is held at most; each list is as long as the account's suppressions. */
const maxAccounts = 10_000;

/**
 * The suppressed ids of each account, read again after at most keyCacheMs: an erasure's runner
 * waits that long after suppressing before its second pass, which erases what came in meanwhile.
 */
export class SuppressedIds implements SuppressionList {
  private readonly lists: ExpiringCache<string, Promise<SuppressedSet>>;

  constructor(
    private readonly pool: Pool,
    cacheMs = keyCacheMs,
  ) {
    this.lists = new ExpiringCache(cacheMs, maxAccounts);
  }

  of(accountId: string): Promise<SuppressedSet> {
    const held = this.lists.get(accountId);
    if (held) return held;
    const read = this.pool.query<{ person_id: string }>(suppressedOfAccount, [accountId]).then(({ rows }) => new Set(rows.map((r) => r.person_id)));
    this.lists.set(accountId, read);
    read.catch(() => this.lists.delete(accountId, read));
    return read;
  }
}

/** The refusal of an item naming a suppressed id, or null (the list holds the ids' pseudonyms, as `refs` makes them). */
export function suppressedIdentity(suppressed: SuppressedSet, refs: AccountRefs, ids: { userId?: string | null; anonymousId?: string | null }): ItemResult | null {
  if (suppressed.size === 0) return null;
  if (typeof ids.userId === 'string' && suppressed.has(personIds.user(refs.user(ids.userId)))) return refusal('userId');
  if (typeof ids.anonymousId === 'string' && suppressed.has(personIds.anonymous(refs.anonymous(ids.anonymousId)))) return refusal('anonymousId');
  return null;
}

const refusal = (field: string): ItemResult =>
  rejected(`${field} is suppressed: this person was erased at the account's request, and new items about them are refused`, 'suppressed', field);
