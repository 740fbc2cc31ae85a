-- Up Migration

-- The anonymous ids merged into one known user, counted before each new merge: a known user takes
-- at most a bounded number of them (src/ingest/identity-map.ts).
CREATE INDEX identity_merges_by_user ON identity_merges (account_id, user_id);

-- Down Migration

DROP INDEX identity_merges_by_user;
