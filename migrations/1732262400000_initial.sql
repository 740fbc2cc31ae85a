-- Up Migration

CREATE TABLE accounts (
  id            uuid PRIMARY KEY,
  name          text NOT NULL,
  license_code  text NOT NULL UNIQUE,
  -- SHA-256 of the access token: tokens are long random strings, so a fast hash is enough.
  token_hash    bytea NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- The event store: one append-only table, ordered globally and per stream.
CREATE TABLE events (
  global_position  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  stream_name      text NOT NULL,
  stream_position  bigint NOT NULL,
  event_id         uuid NOT NULL UNIQUE,
  event_type       text NOT NULL,
  data             jsonb NOT NULL,
  metadata         jsonb NOT NULL,
  recorded_at      timestamptz NOT NULL DEFAULT now(),
  -- The writing transaction: catch-up readers order by it so that a late commit is never skipped.
  transaction_id   xid8 NOT NULL DEFAULT pg_current_xact_id(),
  UNIQUE (stream_name, stream_position)
);
CREATE INDEX events_catch_up ON events (transaction_id, global_position);
CREATE INDEX events_track_id ON events ((metadata->>'trackId'));

-- Next free position per stream; its row lock serialises appends to one stream across processes.
CREATE TABLE streams (
  stream_name    text PRIMARY KEY,
  next_position  bigint NOT NULL
);

-- Appends a batch atomically. Input: a JSON array of {id, stream, type, data, metadata} in append
-- order. Events whose id is already stored are skipped (idempotent). Returns one row per stored or
-- already-stored event id.
CREATE FUNCTION append_events(batch jsonb)
RETURNS TABLE (out_event_id uuid, out_stream_name text, out_stream_position bigint,
               out_global_position bigint, out_duplicate boolean)
LANGUAGE plpgsql AS $$
BEGIN
  -- Lock every stream of the batch in name order, so concurrent batches cannot deadlock.
  INSERT INTO streams (stream_name, next_position)
    SELECT DISTINCT e->>'stream', 0 FROM jsonb_array_elements(batch) e ORDER BY 1
    ON CONFLICT (stream_name) DO NOTHING;
  PERFORM 1 FROM streams s
    WHERE s.stream_name IN (SELECT DISTINCT e->>'stream' FROM jsonb_array_elements(batch) e)
    ORDER BY s.stream_name FOR UPDATE;

  -- A new statement, so its snapshot sees every event committed by whoever held the locks before.
  RETURN QUERY
  WITH input AS (
    SELECT (e->>'id')::uuid AS id, e->>'stream' AS stream, e->>'type' AS type,
           e->'data' AS data, e->'metadata' AS metadata, ord
    FROM jsonb_array_elements(batch) WITH ORDINALITY AS t(e, ord)
  ),
  fresh AS (
    SELECT DISTINCT ON (i.id) i.* FROM input i
    WHERE NOT EXISTS (SELECT 1 FROM events x WHERE x.event_id = i.id)
    ORDER BY i.id, i.ord
  ),
  numbered AS (
    SELECT f.*, s.next_position + row_number() OVER (PARTITION BY f.stream ORDER BY f.ord) - 1 AS pos
    FROM fresh f JOIN streams s ON s.stream_name = f.stream
  ),
  inserted AS (
    INSERT INTO events (stream_name, stream_position, event_id, event_type, data, metadata)
    SELECT n.stream, n.pos, n.id, n.type, n.data, n.metadata FROM numbered n ORDER BY n.ord
    RETURNING events.event_id, events.stream_name, events.stream_position, events.global_position
  ),
  advanced AS (
    UPDATE streams s SET next_position = s.next_position + c.n
    FROM (SELECT f.stream, count(*) AS n FROM fresh f GROUP BY f.stream) c
    WHERE s.stream_name = c.stream
  )
  SELECT i.event_id, i.stream_name, i.stream_position, i.global_position, false FROM inserted i
  UNION ALL
  SELECT x.event_id, x.stream_name, x.stream_position, x.global_position, true
  FROM events x WHERE x.event_id IN (SELECT id FROM input);
END;
$$;

-- Custom attribute types: the first accepted type of a key is final for the account.
CREATE TABLE attribute_types (
  account_id     uuid NOT NULL REFERENCES accounts(id),
  key            text NOT NULL,
  type           text NOT NULL CHECK (type IN ('number', 'string', 'boolean', 'datetime')),
  registered_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, key)
);

-- Which known user each anonymous id was merged into (at most one).
CREATE TABLE identity_merges (
  account_id      uuid NOT NULL REFERENCES accounts(id),
  anonymous_id    text NOT NULL,
  user_id         text NOT NULL,
  merge_event_id  uuid NOT NULL,
  merged_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, anonymous_id)
);

-- Idempotency-Key windows: a key repeated within 24 hours of window_start replays the same trackIDs.
CREATE TABLE idempotency_keys (
  account_id    uuid NOT NULL REFERENCES accounts(id),
  endpoint      text NOT NULL,
  key           text NOT NULL,
  window_start  timestamptz NOT NULL,
  PRIMARY KEY (account_id, endpoint, key)
);

-- Shared request counters of the rate limiter (the layout rate-limiter-flexible expects).
CREATE TABLE rate_limits (
  key     varchar(255) PRIMARY KEY,
  points  integer NOT NULL DEFAULT 0,
  expire  bigint
);

-- Down Migration

DROP TABLE rate_limits;
DROP TABLE idempotency_keys;
DROP TABLE identity_merges;
DROP TABLE attribute_types;
DROP FUNCTION append_events(jsonb);
DROP TABLE streams;
DROP TABLE events;
DROP TABLE accounts;
