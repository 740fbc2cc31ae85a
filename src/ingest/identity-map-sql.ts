/** SQL of the identity map (table identity_merges). */

/**
 * Claims an anonymous id for a user while the user holds fewer than $5 merged ids (counted no
 * further than $5); a second claim changes nothing.
 */
export const claimMerge = `INSERT INTO identity_merges (account_id, anonymous_id, user_id, merge_event_id)
  SELECT $1, $2, $3, $4
  WHERE (SELECT count(*) FROM (SELECT 1 FROM identity_merges WHERE account_id = $1 AND user_id = $3 LIMIT $5) merged) < $5
  ON CONFLICT (account_id, anonymous_id) DO NOTHING`;

/** Who an anonymous id was merged into, and the merge event's id. */
export const selectMerge = 'SELECT user_id, merge_event_id FROM identity_merges WHERE account_id = $1 AND anonymous_id = $2';
