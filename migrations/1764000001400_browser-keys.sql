-- Up Migration

-- Browser keys (docs/browser.md): public credentials of web pages, bound to origins, that may only
-- post items. Stored hashed like access tokens. `changed_xid` is the transaction of the last change
-- (creation, new origins or label, revocation): each process reads the rows changed by
-- transactions not yet finished at its last look (pg_snapshot_xmin, as the event store's catch-up
-- does), so a change is in effect within seconds without a query per request, and one committed
-- late is never skipped.
CREATE TABLE browser_keys (
  id            uuid PRIMARY KEY,
  account_id    uuid NOT NULL REFERENCES accounts(id),
  label         text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 100),
  -- SHA-256 of the key (192 random bits, so a fast hash is enough).
  key_hash      bytea NOT NULL UNIQUE,
  -- Normalized origins: 'https://shop.example.com', 'https://*.example.com'.
  origins       text[] NOT NULL CHECK (cardinality(origins) BETWEEN 1 AND 50),
  created_at    timestamptz NOT NULL DEFAULT now(),
  -- Kept to the minute, written off the request path.
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  changed_xid   xid8 NOT NULL DEFAULT pg_current_xact_id()
);
CREATE INDEX browser_keys_active ON browser_keys (account_id, created_at) WHERE revoked_at IS NULL;
CREATE INDEX browser_keys_changed ON browser_keys (changed_xid);

-- An Idempotency-Key's window in hours: 24, or 192 for the batches of browser keys, which the
-- browser SDK keeps up to 7 days and re-sends after a page sent them as it went away.
ALTER TABLE idempotency_keys ADD COLUMN window_hours integer NOT NULL DEFAULT 24;

-- Down Migration

ALTER TABLE idempotency_keys DROP COLUMN window_hours;
DROP TABLE browser_keys;
