-- Up Migration

-- The key of the anonymous id that seals a merge's events, made or found when the merge is claimed
-- (docs/decisions.md, Erasure: merges and erasures). An erasure that finds the merge erases that
-- key with the user's, so the merge's events read as erased whenever they are appended.
ALTER TABLE identity_merges ADD COLUMN merge_key_id bigint;

-- Down Migration

ALTER TABLE identity_merges DROP COLUMN merge_key_id;
