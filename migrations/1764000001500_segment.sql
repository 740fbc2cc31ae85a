-- Up Migration

-- Segment's tracking API (docs/segment.md). A rejected item keeps the library that sent it, as
-- its message names itself (context.library: 'analytics-node-next 3.1.0'), so that the owner sees
-- which app sends bad data.
ALTER TABLE ingest_rejected_items ADD COLUMN client text CHECK (char_length(client) <= 200);

-- What the account keeps of a visitor's address (a message's context.ip, or the page's own):
-- all of it, its network part only, or nothing.
ALTER TABLE accounts ADD COLUMN address_policy text NOT NULL DEFAULT 'truncate'
  CHECK (address_policy IN ('keep', 'truncate', 'drop'));

-- Down Migration

ALTER TABLE accounts DROP COLUMN address_policy;
ALTER TABLE ingest_rejected_items DROP COLUMN client;
