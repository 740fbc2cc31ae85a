import { inTransaction } from '../db/transaction.js';
import type { Pool } from '../db/pool.js';
import { currentKeys, ensureKeys } from '../eventstore/person-keys-sql.js';
import { newKey, personIds } from '../eventstore/sealing.js';
import { beginWithUserLock, claimMerge, selectMerge } from './identity-map-sql.js';

export type MergeClaim =
  | {
      ok: true;
      mergeEventId: string;
      /** The key that seals the merge's event (null for a merge claimed before keys were recorded). */
      sealingKeyId: number | null;
      /** true when claimed now, false for a repeat of the merge. */
      fresh: boolean;
    }
  | { ok: false; mergedInto: string }
  | { ok: false; full: true };

/**
 * Anonymous ids one known user may take in merges: a profile is a device or a browser of a person,
 * and a user with more is no person but a shared or scripted id. Without a bound, an ingest token
 * could grow one lead (its row, its reply, its timeline's streams) without end.
 */
export const maxMergedIdsPerUser = 1_000;

interface MergeRow {
  user_id: string;
  merge_event_id: string;
  merge_key_id: number | null;
  fresh: boolean;
}

/** Which known user each anonymous id was merged into: at most one, for good. */
export class IdentityMap {
  constructor(private readonly pool: Pool) {}

  /**
   * Claims `anonymousId` for `userId`. A repeat of the same merge returns the event id of the first
   * one, so appending it again is an idempotent no-op (and completes a merge whose append failed).
   * A user already holding `maxMergedIdsPerUser` ids takes no other.
   *
   * The claim records the user's current key, made if they have none, under the lock an erasure of
   * the user takes to decide it is done: the merge's events are sealed with that key, so a merge
   * claimed before an erasure completes reads as erased with the user even when its events are
   * appended after it (docs/decisions.md, Erasure).
   */
  async claim(accountId: string, anonymousId: string, userId: string, proposedEventId: string): Promise<MergeClaim> {
    const row = await inTransaction(
      this.pool,
      async (client) => {
        const person = personIds.user(userId);
        const made = await client.query<{ key_id: number }>(ensureKeys, [[accountId], [person], [newKey()]]);
        // A key made by another transaction meanwhile is in neither part of ensureKeys: read again.
        const keyId = made.rows[0]?.key_id ?? (await client.query<{ key_id: number }>(currentKeys, [accountId, [person]])).rows[0]?.key_id ?? null;
        const claimed = await client.query<MergeRow>(claimMerge, [accountId, anonymousId, userId, proposedEventId, maxMergedIdsPerUser, keyId]);
        // A merge of the id committed by another transaction after this statement began: read again.
        return claimed.rows[0] ?? (await client.query<MergeRow>(selectMerge, [accountId, anonymousId])).rows[0];
      },
      { begin: beginWithUserLock(accountId, userId) },
    );
    if (!row) return { ok: false, full: true };
    if (row.user_id !== userId) return { ok: false, mergedInto: row.user_id };
    return { ok: true, mergeEventId: row.merge_event_id, sealingKeyId: row.merge_key_id, fresh: row.fresh };
  }
}
