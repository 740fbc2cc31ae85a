-- Up Migration

-- The order in which the track index wrote its rows. Live events page and poll by it rather than by
-- global position: events are indexed in the order their transactions committed, so an event of a
-- lower global position can be indexed after a higher one, and a cursor of global positions would
-- skip it for good. One worker at a time writes a projection, so this order only grows (a rebuild
-- empties the table with TRUNCATE, which keeps the sequence going).
ALTER TABLE track_index ADD COLUMN indexed_order bigint GENERATED ALWAYS AS IDENTITY;

-- The live events of an account (GET /admin/v1/accounts/<license>/live), newest first: a page, and
-- the once-a-second poll for what is newer than a cursor, each walk only the rows they return.
CREATE INDEX track_index_by_account ON track_index (account_id, indexed_order DESC);

-- Down Migration

DROP INDEX track_index_by_account;
ALTER TABLE track_index DROP COLUMN indexed_order;
