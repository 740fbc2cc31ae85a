-- Up Migration

-- The ADMIN_TOKEN the API's processes last started with, and its generation: a number that grows by
-- one whenever a process starts with an ADMIN_TOKEN other than the last one (or with none after
-- one). The token is kept as a salted scrypt hash only, so the table does not hand out the token and
-- each guess against it costs what scrypt costs. One row, always there: a process starting locks
-- it, so processes starting at once with the same token agree on one generation.
CREATE TABLE admin_token_generation (
  only_row    boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  salt        bytea NOT NULL,
  -- scrypt of ADMIN_TOKEN with salt; null: started without one (and before any process started).
  token_hash  bytea,
  generation  bigint NOT NULL
);
INSERT INTO admin_token_generation (salt, token_hash, generation) VALUES ('\x'::bytea, NULL, 0);

-- An operator session holds the generation it was signed in under, and lives only in processes of
-- that generation: changing ADMIN_TOKEN and then changing it back does not bring it back. Sessions
-- made before there were generations cannot say theirs: their operators sign in again.
DELETE FROM dashboard_sessions WHERE kind = 'operator';
ALTER TABLE dashboard_sessions ADD COLUMN admin_generation bigint;
ALTER TABLE dashboard_sessions ADD CONSTRAINT dashboard_sessions_operator_generation
  CHECK (kind = 'account' OR admin_generation IS NOT NULL);

-- Down Migration

ALTER TABLE dashboard_sessions DROP CONSTRAINT dashboard_sessions_operator_generation;
ALTER TABLE dashboard_sessions DROP COLUMN admin_generation;
DROP TABLE admin_token_generation;
