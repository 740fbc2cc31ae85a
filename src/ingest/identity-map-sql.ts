import { escapeLiteral } from 'pg';

/** SQL of the identity map (table identity_merges). */

/**
 * The lock a merge into a user takes shared and an erasure of the user takes exclusive when it
 * decides it is done (src/erasure/sql.ts): a merge commits either before that decision, and is
 * erased with the user, or after it. Opened with the transaction, in its first round trip.
 */
export const beginWithUserLock = (accountId: string, userRef: string): string => `BEGIN; ${lockUsers(accountId, [userRef], 'shared')}`;

/** The statement that takes the merge locks of users, by their pseudonyms (in a stable order: two takers never deadlock). */
export function lockUsers(accountId: string, userRefs: readonly string[], mode: 'shared' | 'exclusive'): string {
  const fn = mode === 'shared' ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  const keys = [...new Set(userRefs)].sort().map((userRef) => `hashtextextended(${escapeLiteral(`${accountId}/${userRef}`)}, 0)`);
  return `SELECT ${keys.length === 0 ? '1' : keys.map((key) => `${fn}(${key})`).join(', ')}`;
}

/**
 * Claims anonymous id $2 for user $3 (their pseudonyms; $7 and $8 the ids) while the user holds
 * fewer than $5 merged ids (counted no further than $5), with the anonymous id's key $6 that
 * seals the merge's events; a second claim changes nothing. Returns the merge as it stands: made now, or as
 * it was before the statement began.
 */
export const claimMerge = `
WITH claimed AS (
  INSERT INTO identity_merges (account_id, anonymous_ref, user_ref, merge_event_id, merge_key_id, anonymous_id, user_id)
  SELECT $1, $2, $3, $4, $6, $7, $8
  WHERE (SELECT count(*) FROM (SELECT 1 FROM identity_merges WHERE account_id = $1 AND user_ref = $3 LIMIT $5) merged) < $5
  ON CONFLICT (account_id, anonymous_ref) DO NOTHING
  RETURNING user_ref, user_id, merge_event_id, merge_key_id
)
SELECT user_ref, user_id, merge_event_id, merge_key_id, true AS fresh FROM claimed
UNION ALL
SELECT user_ref, user_id, merge_event_id, merge_key_id, false AS fresh FROM identity_merges WHERE account_id = $1 AND anonymous_ref = $2 AND NOT EXISTS (SELECT 1 FROM claimed)`;

/** Who an anonymous id (its pseudonym) was merged into, the merge event's id and its key. */
export const selectMerge = 'SELECT user_ref, user_id, merge_event_id, merge_key_id, false AS fresh FROM identity_merges WHERE account_id = $1 AND anonymous_ref = $2';
