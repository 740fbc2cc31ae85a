-- Up Migration

-- What the Live events list shows of each item and filters by (docs/api.md, Live events): the
-- event's name (eventName of an event or product event), the person (userId, anonymousId), the
-- product, and the start of the payload as JSON text. Written by the track index; rows indexed
-- before this migration keep them null until that projection is rebuilt.
ALTER TABLE track_index
  ADD COLUMN item_name text,
  ADD COLUMN user_id text,
  ADD COLUMN anonymous_id text,
  ADD COLUMN product_id text,
  ADD COLUMN preview text;

-- The list filtered by name or by person, walked from the latest row down as the unfiltered list is.
CREATE INDEX track_index_by_account_name ON track_index (account_id, item_name, indexed_order DESC) WHERE item_name IS NOT NULL;
-- Not partial: PostgreSQL cannot prove that `coalesce(user_id, anonymous_id) = $1` implies either is set.
CREATE INDEX track_index_by_account_person ON track_index (account_id, (coalesce(user_id, anonymous_id)), indexed_order DESC);

-- Down Migration

DROP INDEX track_index_by_account_person;
DROP INDEX track_index_by_account_name;
ALTER TABLE track_index DROP COLUMN preview, DROP COLUMN product_id, DROP COLUMN anonymous_id, DROP COLUMN user_id, DROP COLUMN item_name;
