-- Up Migration

-- Projections apply each account's events on a cursor of its own (docs/projections.md, Parts,
-- claims and checkpoints), so that no account's read models wait behind another account's
-- backlog. On PostgreSQL a cursor reads one account's events in catch-up order by this index.
ALTER TABLE events ADD COLUMN account_id text GENERATED ALWAYS AS (metadata->>'accountId') STORED;
CREATE INDEX events_by_account ON events (account_id, transaction_id, global_position);

-- Projection worker processes alive (or until their entry expires): each claims about its share of
-- the parts, the part count divided by the live workers.
CREATE TABLE projection_workers (
  worker_id     uuid PRIMARY KEY,
  -- pid@host, for people.
  name          text NOT NULL,
  started_at    timestamptz NOT NULL DEFAULT now(),
  heartbeat_at  timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);

-- Accounts are hashed into a fixed number of parts; a worker holds a part under a lease it renews.
-- `epoch` grows at every claim: a batch commits only if, in its own transaction, the part is still
-- held by its worker at the epoch it claimed (fencing), so a worker that lost its part commits
-- nothing more.
CREATE TABLE projection_parts (
  part              integer PRIMARY KEY,
  owner             uuid,
  owner_name        text,
  epoch             bigint NOT NULL DEFAULT 0,
  lease_expires_at  timestamptz,
  claimed_at        timestamptz,
  -- The worker's latest view of the part, for status: accounts behind, the worst of them (bounded).
  lag               jsonb,
  lag_at            timestamptz
);
INSERT INTO projection_parts (part) SELECT generate_series(0, 15);

-- Every account that has events, found by reading the store (any worker registers what it reads),
-- with the part it hashes into and a store position before its first event (where its cursors
-- start, so that a new account's first read need not scan the store from the start).
CREATE TABLE projection_accounts (
  account_id        text PRIMARY KEY,
  part              integer NOT NULL,
  first_checkpoint  text,
  discovered_at     timestamptz NOT NULL DEFAULT now(),
  -- Bumped by a rebuild of the account: workers then replay it.
  reset_at          timestamptz
);
CREATE INDEX projection_accounts_by_part ON projection_accounts (part);

-- How far the store has been read for new accounts: every account with an event before it is in
-- projection_accounts. One row.
CREATE TABLE projection_discovery (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  checkpoint  text
);
INSERT INTO projection_discovery DEFAULT VALUES;

-- One cursor per projection and account. Moved in the transaction of the batch it ends, by
-- compare-and-set on the position the batch was read from.
CREATE TABLE projection_account_checkpoints (
  projection      text NOT NULL,
  account_id      text NOT NULL,
  checkpoint      text,
  events_applied  bigint NOT NULL DEFAULT 0,
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- Set when the cursor first found nothing more to read: a rebuild is finished once every
  -- account's cursor has.
  caught_up_at    timestamptz,
  PRIMARY KEY (projection, account_id)
);

-- The per-projection rows keep the rebuild requests and state. Their checkpoint, the single cursor
-- of before, stays a lower bound for the accounts' own cursors: every event before it is applied.
COMMENT ON COLUMN projection_checkpoints.checkpoint IS
  'Every event before this position is applied (the cursor of a worker that applied all accounts at once); account cursors start no earlier.';

-- Applied ids (EventStoreDB repeats) by account, so that a rebuild of one account forgets its own.
ALTER TABLE projection_applied_events ADD COLUMN account_id text;
CREATE INDEX projection_applied_events_by_account ON projection_applied_events (projection, account_id);

-- Down Migration

DROP INDEX projection_applied_events_by_account;
ALTER TABLE projection_applied_events DROP COLUMN account_id;
DROP TABLE projection_account_checkpoints;
DROP TABLE projection_discovery;
DROP TABLE projection_accounts;
DROP TABLE projection_parts;
DROP TABLE projection_workers;
DROP INDEX events_by_account;
ALTER TABLE events DROP COLUMN account_id;
