-- Up Migration

-- Leads search (`q`) matches substrings of leads.search_text. A trigram index (pg_trgm, a contrib
-- extension shipped with the embedded server) finds the rows of a rare term of 3 or more
-- characters without reading the account's every lead. A server without pg_trgm (DATABASE_URL of a
-- server without contrib) migrates without it: search gives the same results, by scanning the
-- account's leads in list order (docs/operations.md says how to add the index later).
-- So does a role that may not create it (CREATE privilege on the database).
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'pg_trgm could not be created (%): leads search runs without its trigram index', SQLERRM;
    END;
  ELSE
    RAISE NOTICE 'pg_trgm is not available on this server: leads search runs without its trigram index';
  END IF;
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
    EXECUTE 'CREATE INDEX leads_search ON leads USING gin (search_text gin_trgm_ops)';
  END IF;
END
$$;

-- The leads list in its order (newest first, ties by kind and id), leaving out merged anonymous
-- profiles as the list does; and the same per kind, for `kind=known|anonymous`.
CREATE INDEX leads_list ON leads (account_id, created_position DESC, profile_kind DESC, profile_id DESC) WHERE merged_into IS NULL;
CREATE INDEX leads_list_by_kind ON leads (account_id, profile_kind, created_position DESC, profile_id DESC) WHERE merged_into IS NULL;
DROP INDEX leads_by_creation;

-- A lead's timeline: the stored events of its streams, latest first.
CREATE INDEX track_index_by_stream ON track_index (stream_name, global_position DESC);

-- Down Migration

DROP INDEX track_index_by_stream;
CREATE INDEX leads_by_creation ON leads (account_id, created_position DESC);
DROP INDEX leads_list_by_kind;
DROP INDEX leads_list;
DROP INDEX IF EXISTS leads_search;
