-- Up Migration

-- What each account's ingest accepted and rejected, written by the ingest activity recorder once a
-- second (src/ingest/activity.ts). Counts per minute and endpoint, kept 7 days: the overview.
CREATE TABLE ingest_activity_minutes (
  account_id  uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  minute      timestamptz NOT NULL,
  endpoint    text NOT NULL,
  accepted    bigint NOT NULL DEFAULT 0,
  rejected    bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, minute, endpoint)
);
-- Retention deletes by age across accounts.
CREATE INDEX ingest_activity_minutes_minute ON ingest_activity_minutes (minute);

-- Rejected items per hour, endpoint and reason, kept 30 days: the warnings' counts.
CREATE TABLE ingest_rejections_hourly (
  account_id    uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  hour          timestamptz NOT NULL,
  endpoint      text NOT NULL,
  reason        text NOT NULL,
  count         bigint NOT NULL DEFAULT 0,
  last_seen_at  timestamptz NOT NULL,
  PRIMARY KEY (account_id, hour, endpoint, reason)
);
CREATE INDEX ingest_rejections_hourly_hour ON ingest_rejections_hourly (hour);

-- The rejected items themselves, the latest 1,000 per account (older ones are deleted as new ones
-- come). Client values are kept as text: the message the client got and an excerpt of at most
-- 2 KB of what it sent, cut at a character boundary.
CREATE TABLE ingest_rejected_items (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
  at          timestamptz NOT NULL,
  endpoint    text NOT NULL,
  reason      text NOT NULL,
  status      integer NOT NULL,
  message     text NOT NULL,
  excerpt     text,
  truncated   boolean NOT NULL DEFAULT false
);
-- The latest first (id is the order of recording), per account and per account and reason.
CREATE INDEX ingest_rejected_items_account ON ingest_rejected_items (account_id, id);
CREATE INDEX ingest_rejected_items_reason ON ingest_rejected_items (account_id, reason, id);
CREATE INDEX ingest_rejected_items_at ON ingest_rejected_items (at);

-- Down Migration

DROP TABLE ingest_rejected_items;
DROP TABLE ingest_rejections_hourly;
DROP TABLE ingest_activity_minutes;
