import { inTransaction } from '../db/transaction.js';
import type { Pool } from '../db/pool.js';
import { currentKeys, ensureKeys } from '../eventstore/person-keys-sql.js';
import type { AccountRefs } from '../eventstore/events.js';
import { newKey, personIds } from '../eventstore/sealing.js';
import { beginWithUserLock, claimMerge, selectMerge } from './identity-map-sql.js';

export type MergeClaim =
  | {
      ok: true;
      mergeEventId: string;
      /** The key that seals the merge's event: the anonymous id's (null for a merge claimed before keys were recorded). */
      sealingKeyId: number | null;
      /** The user's current key at the claim, which seals the profile that makes the merge. */
      profileKeyId: number | null;
      /** true when claimed now, false for a repeat of the merge. */
      fresh: boolean;
    }
  | { ok: false; mergedInto: string | null }
  | { ok: false; full: true };

/**
 * Anonymous ids one known user may take in merges: a profile is a device or a browser of a person,
 * and a user with more is no person but a shared or scripted id. Without a bound, an ingest token
 * could grow one lead (its row, its reply, its timeline's streams) without end.
 */
export const maxMergedIdsPerUser = 1_000;

interface MergeRow {
  user_ref: string;
  user_id: string | null;
  merge_event_id: string;
  merge_key_id: number | null;
  fresh: boolean;
}

/**
 * Which known user each anonymous id was merged into: at most one, for good. Kept by the ids'
 * pseudonyms, with the ids beside them until their person is erased.
 */
export class IdentityMap {
  constructor(private readonly pool: Pool) {}

  /**
   * Claims `anonymousId` for `userId`. A repeat of the same merge returns the event id of the first
   * one, so appending it again is an idempotent no-op (and completes a merge whose append failed).
   * A user already holding `maxMergedIdsPerUser` ids takes no other.
   *
   * The claim records the anonymous id's current key, and finds the user's, made where missing,
   * under the lock an erasure of the user takes to decide it is done: the merge's event is sealed
   * with the first and the profile that makes it with the second, so a merge claimed before an
   * erasure completes reads as erased with the user even when its events are appended after it,
   * and the merge also with the anonymous id erased alone (docs/decisions.md, Erasure).
   */
  async claim(refs: AccountRefs, anonymousId: string, userId: string, proposedEventId: string): Promise<MergeClaim> {
    const { accountId } = refs;
    const userRef = refs.user(userId);
    const anonymousRef = refs.anonymous(anonymousId);
    const anonymousPerson = personIds.anonymous(anonymousRef);
    const userPerson = personIds.user(userRef);
    const { row, keys } = await inTransaction(
      this.pool,
      async (client) => {
        // The current keys of both, made where missing: the merge is sealed with the anonymous id's
        // (it reads as erased with the user, whose erasure erases the keys of every id merged into
        // them, and with the anonymous id erased alone), the profile that makes it with the user's.
        const persons = [anonymousPerson, userPerson];
        const made = await client.query<{ person_id: string; key_id: number }>(ensureKeys, [persons.map(() => accountId), persons, persons.map(() => newKey())]);
        const keys = new Map(made.rows.map((r) => [r.person_id, r.key_id]));
        // A key made by another transaction meanwhile is in neither part of ensureKeys: read again.
        const missing = persons.filter((person) => !keys.has(person));
        if (missing.length > 0) for (const r of (await client.query<{ person_id: string; key_id: number }>(currentKeys, [accountId, missing])).rows) keys.set(r.person_id, r.key_id);
        const params = [accountId, anonymousRef, userRef, proposedEventId, maxMergedIdsPerUser, keys.get(anonymousPerson) ?? null, anonymousId, userId];
        const claimed = await client.query<MergeRow>(claimMerge, params);
        // A merge of the id committed by another transaction after this statement began: read again.
        return { row: claimed.rows[0] ?? (await client.query<MergeRow>(selectMerge, [accountId, anonymousRef])).rows[0], keys };
      },
      { begin: beginWithUserLock(accountId, userRef) },
    );
    if (!row) return { ok: false, full: true };
    // The user it was merged into, while the ids are kept (null once either person is erased).
    if (row.user_ref !== userRef) return { ok: false, mergedInto: row.user_id };
    return { ok: true, mergeEventId: row.merge_event_id, sealingKeyId: row.merge_key_id, profileKeyId: keys.get(userPerson) ?? null, fresh: row.fresh };
  }
}
