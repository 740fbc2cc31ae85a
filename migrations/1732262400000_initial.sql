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

-- Takes a transaction-scoped advisory lock on each stream, in one global order, so that writers of
-- the same streams queue up and concurrent batches cannot deadlock.
CREATE FUNCTION lock_streams(stream_names text[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- PERFORM runs the query to its end: every stream is locked.
  PERFORM pg_advisory_xact_lock(7301, h)
    FROM (SELECT DISTINCT hashtext(s) AS h FROM unnest(stream_names) AS s ORDER BY 1) AS locks;
END;
$$;

-- Appends a batch atomically, in the order given: ids, streams and types are parallel arrays, and
-- data and metadata JSON arrays of the same length. Each stream's next position is its highest
-- stored position plus one, read under a transaction-scoped advisory lock on the stream (taken in
-- one global order, so concurrent batches cannot deadlock): positions stay gap-free across
-- processes without a bookkeeping row to update. Every id must be new: a stored id fails the
-- unique index, and the caller then uses append_events_dedupe.
--
-- Its only read of events is a per-stream max() answered from the (stream_name, stream_position)
-- index, so the plan cached by a connection stays right however the table grows.
CREATE FUNCTION append_events(ids uuid[], stream_names text[], types text[], datas jsonb, metas jsonb)
RETURNS TABLE (out_event_id uuid, out_stream_name text, out_stream_position bigint,
               out_global_position bigint, out_duplicate boolean)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM lock_streams(stream_names);

  -- A new statement, so its snapshot sees every event committed by whoever held the locks before.
  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(ids, stream_names, types) WITH ORDINALITY AS u(id, stream, type, ord)
  ),
  heads AS (
    SELECT s.stream, (SELECT max(e.stream_position) FROM events e WHERE e.stream_name = s.stream) AS head
    FROM (SELECT DISTINCT i.stream FROM input i) AS s
  ),
  inserted AS (
    INSERT INTO events (stream_name, stream_position, event_id, event_type, data, metadata)
    SELECT i.stream, COALESCE(h.head, -1) + row_number() OVER (PARTITION BY i.stream ORDER BY i.ord),
           i.id, i.type, datas->(i.ord::int - 1), metas->(i.ord::int - 1)
    FROM input i JOIN heads h ON h.stream = i.stream
    ORDER BY i.ord
    RETURNING events.event_id, events.stream_name, events.stream_position, events.global_position
  )
  SELECT n.event_id, n.stream_name, n.stream_position, n.global_position, false FROM inserted n;
END;
$$;

-- As append_events, but ids already stored are skipped and returned with out_duplicate true, and an
-- id repeated inside the batch is stored once.
CREATE FUNCTION append_events_dedupe(ids uuid[], stream_names text[], types text[], datas jsonb, metas jsonb)
RETURNS TABLE (out_event_id uuid, out_stream_name text, out_stream_position bigint,
               out_global_position bigint, out_duplicate boolean)
LANGUAGE plpgsql
-- Its id lookups become joins whose cached plan could scan the whole table: plan every call.
SET plan_cache_mode = force_custom_plan
AS $$
BEGIN
  -- The locks append_events takes (they are re-entrant), first: the lookups below must see every
  -- event committed by whoever held them before.
  PERFORM lock_streams(stream_names);

  RETURN QUERY
  WITH input AS (
    SELECT * FROM unnest(ids, stream_names, types) WITH ORDINALITY AS u(id, stream, type, ord)
  ),
  fresh AS (
    SELECT DISTINCT ON (i.id) i.* FROM input i
    WHERE NOT EXISTS (SELECT 1 FROM events x WHERE x.event_id = i.id)
    ORDER BY i.id, i.ord
  ),
  batch AS (
    SELECT array_agg(f.id ORDER BY f.ord) AS ids, array_agg(f.stream ORDER BY f.ord) AS streams,
           array_agg(f.type ORDER BY f.ord) AS types,
           jsonb_agg(datas->(f.ord::int - 1) ORDER BY f.ord) AS datas,
           jsonb_agg(metas->(f.ord::int - 1) ORDER BY f.ord) AS metas
    FROM fresh f
  )
  SELECT a.* FROM batch b, append_events(b.ids, b.streams, b.types, b.datas, b.metas) AS a
  WHERE b.ids IS NOT NULL
  UNION ALL
  SELECT x.event_id, x.stream_name, x.stream_position, x.global_position, true
  FROM events x WHERE x.event_id IN (SELECT i.id FROM input i);
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

-- Idempotency-Key windows: a key repeated within 24 hours of window_start, with the same body
-- (body_hash), gets the same trackIDs; once its first request has been answered 200, the recorded
-- reply is replayed as it was.
CREATE TABLE idempotency_keys (
  account_id    uuid NOT NULL REFERENCES accounts(id),
  endpoint      text NOT NULL,
  key           text NOT NULL,
  window_start  timestamptz NOT NULL,
  body_hash     bytea NOT NULL,
  reply         jsonb,
  PRIMARY KEY (account_id, endpoint, key)
);
CREATE INDEX idempotency_keys_window ON idempotency_keys (window_start);

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
DROP FUNCTION append_events_dedupe(uuid[], text[], text[], jsonb, jsonb);
DROP FUNCTION append_events(uuid[], text[], text[], jsonb, jsonb);
DROP FUNCTION lock_streams(text[]);
DROP TABLE events;
DROP TABLE accounts;
