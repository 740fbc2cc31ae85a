-- Up Migration

-- The live events of an account (GET /admin/v1/accounts/<license>/live), newest first: a page, and
-- the once-a-second poll for what is newer than a cursor, each walk only the rows they return.
CREATE INDEX track_index_by_account ON track_index (account_id, global_position DESC);

-- Down Migration

DROP INDEX track_index_by_account;
