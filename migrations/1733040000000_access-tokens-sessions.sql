-- Up Migration

-- Several access tokens per account, each with a label and a scope: `ingest` posts items only,
-- `ingest+read` also reads (read API, dashboard, token management). Revoked tokens stay as rows
-- (revoked_at set), so that a token's history is kept and its hash can never be issued again.
CREATE TABLE access_tokens (
  id            uuid PRIMARY KEY,
  account_id    uuid NOT NULL REFERENCES accounts(id),
  label         text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
  scope         text NOT NULL CHECK (scope IN ('ingest', 'ingest+read')),
  -- SHA-256 of the token (256 random bits, so a fast hash is enough).
  token_hash    bytea NOT NULL UNIQUE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- Kept to the minute, written off the request path.
  last_used_at  timestamptz,
  revoked_at    timestamptz
);
CREATE INDEX access_tokens_active ON access_tokens (account_id, created_at) WHERE revoked_at IS NULL;

-- Every account's token so far becomes its first token: it keeps working, and may read.
INSERT INTO access_tokens (id, account_id, label, scope, token_hash, created_at)
SELECT gen_random_uuid(), id, 'initial', 'ingest+read', token_hash, created_at FROM accounts;

-- access_tokens is the one place a token is looked up: a second copy here could only drift.
ALTER TABLE accounts DROP COLUMN token_hash;

-- Dashboard sessions. The cookie holds a random session id; only its SHA-256 is stored. An account
-- session names the token it signed in with (revoking that token ends it); an operator session
-- holds an HMAC of ADMIN_TOKEN keyed by the session id (not stored), so changing ADMIN_TOKEN ends
-- it and the table reveals nothing about the admin token.
CREATE TABLE dashboard_sessions (
  id_hash            bytea PRIMARY KEY,
  kind               text NOT NULL CHECK (kind IN ('account', 'operator')),
  account_id         uuid REFERENCES accounts(id),
  token_id           uuid REFERENCES access_tokens(id),
  admin_fingerprint  bytea,
  created_at         timestamptz NOT NULL DEFAULT now(),
  expires_at         timestamptz NOT NULL,
  CHECK (
    (kind = 'account' AND account_id IS NOT NULL AND token_id IS NOT NULL AND admin_fingerprint IS NULL)
    OR (kind = 'operator' AND account_id IS NULL AND token_id IS NULL AND admin_fingerprint IS NOT NULL)
  )
);
-- Expired sessions are deleted at each sign-in.
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
CREATE INDEX dashboard_sessions_token ON dashboard_sessions (token_id);

-- Down Migration

DROP TABLE dashboard_sessions;
ALTER TABLE accounts ADD COLUMN token_hash bytea;
-- Each account keeps its newest active token (its newest token when none is active).
UPDATE accounts a SET token_hash = (
  SELECT t.token_hash FROM access_tokens t WHERE t.account_id = a.id
  ORDER BY (t.revoked_at IS NULL) DESC, t.created_at DESC LIMIT 1
);
ALTER TABLE accounts ALTER COLUMN token_hash SET NOT NULL;
DROP TABLE access_tokens;
