-- Up Migration

-- Where each projection has got to in the event store. The checkpoint is written in the same
-- transaction as the read-model rows of the batch it follows, so a crash can neither skip nor
-- repeat a batch.
CREATE TABLE projection_checkpoints (
  projection            text PRIMARY KEY,
  -- Opaque event-store position of the last event read; NULL means from the start.
  checkpoint            text,
  -- Events applied since the read models were last (re)built.
  events_applied        bigint NOT NULL DEFAULT 0,
  updated_at            timestamptz NOT NULL DEFAULT now(),
  -- Set by `tracking projections rebuild`; the active worker truncates and starts over.
  rebuild_requested_at  timestamptz,
  rebuild_started_at    timestamptz,
  rebuild_finished_at   timestamptz,
  -- Events to replay, counted when the rebuild began (for progress).
  rebuild_target        bigint,
  -- The worker that holds the projection's lock, and since when (status shows them).
  active_worker         text,
  active_since          timestamptz
);

-- Times as the read API shows them: UTC, microseconds, `Z`.
CREATE FUNCTION iso_utc(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Leads: one row per profile, known (profile_kind 'user') or anonymous. System attributes of
-- docs/spec.md 2.2 are typed columns; custom attributes are in `attributes` with their types.
CREATE TABLE leads (
  account_id           uuid NOT NULL,
  profile_kind         text NOT NULL CHECK (profile_kind IN ('user', 'anonymous')),
  profile_id           text NOT NULL,
  user_id              text,
  anonymous_id         text,
  first_name           text,
  last_name            text,
  email                text,
  birth_date           timestamptz,
  gender               text,
  maritial_status      text,
  children             integer,
  education            text,
  title                text,
  address              text,
  city                 text,
  state                text,
  zipcode              text,
  country              text,
  phone                text,
  job_position         text,
  company              text,
  number_of_employees  integer,
  annual_revenue       integer,
  opt_in_sms           boolean NOT NULL,
  opt_in_email         boolean NOT NULL,
  mobile               text,
  last_active          timestamptz,
  updated_at           timestamptz,
  date_identified      timestamptz NOT NULL,
  points               integer NOT NULL,
  device_type          text,
  utm_source           text,
  attributes           jsonb NOT NULL,
  attribute_types      jsonb NOT NULL,
  -- Keys sent to this profile itself (`email`, `attributes.plan`); a known profile's other values
  -- were filled in from anonymous profiles merged into it, and its own values always win.
  own_keys             text[] NOT NULL,
  -- Anonymous ids merged into this known profile, in merge order.
  anonymous_ids        text[] NOT NULL,
  -- The known user an anonymous profile was merged into.
  merged_into          text,
  -- What `q` searches: ids, email, names, merged anonymous ids, lowercased by the projection so
  -- that the match does not depend on the database's locale.
  search_text          text NOT NULL,
  -- Events applied to this row.
  version              integer NOT NULL,
  -- Global position of the event that created the row: the stable order of the leads list.
  created_position     bigint NOT NULL,
  -- receivedAt of the creating and of the latest event: never the projection's clock.
  created_at           timestamptz NOT NULL,
  changed_at           timestamptz NOT NULL,
  PRIMARY KEY (account_id, profile_kind, profile_id)
-- Room in each page, so that a row's new version usually stays on its page (a HOT update).
) WITH (fillfactor = 70);
CREATE INDEX leads_by_creation ON leads (account_id, created_position DESC);

-- Merges as the leads projection has seen them: an anonymous id and the known user it went to.
CREATE TABLE lead_merges (
  account_id    uuid NOT NULL,
  anonymous_id  text NOT NULL,
  user_id       text NOT NULL,
  PRIMARY KEY (account_id, anonymous_id)
);

-- Events of the /events endpoint, per profile.
CREATE TABLE user_events (
  event_id         uuid PRIMARY KEY,
  account_id       uuid NOT NULL,
  user_id          text,
  anonymous_id     text,
  event_name       text NOT NULL,
  event_time       text,
  event_time_utc   timestamptz NOT NULL,
  event_data       jsonb NOT NULL,
  received_at      timestamptz NOT NULL,
  global_position  bigint NOT NULL
);
CREATE INDEX user_events_by_user ON user_events (account_id, user_id, event_time_utc) WHERE user_id IS NOT NULL;
CREATE INDEX user_events_by_anonymous ON user_events (account_id, anonymous_id, event_time_utc) WHERE anonymous_id IS NOT NULL;

-- Latest properties of each product, and who sent them.
CREATE TABLE products (
  account_id        uuid NOT NULL,
  product_id        text NOT NULL,
  properties        jsonb NOT NULL,
  sent_by_user_id   text,
  version           integer NOT NULL,
  created_position  bigint NOT NULL,
  created_at        timestamptz NOT NULL,
  changed_at        timestamptz NOT NULL,
  PRIMARY KEY (account_id, product_id)
);

CREATE TABLE product_events (
  event_id         uuid PRIMARY KEY,
  account_id       uuid NOT NULL,
  product_id       text NOT NULL,
  user_id          text,
  event_name       text NOT NULL,
  event_time       text,
  event_time_utc   timestamptz NOT NULL,
  event_data       jsonb NOT NULL,
  received_at      timestamptz NOT NULL,
  global_position  bigint NOT NULL
);
CREATE INDEX product_events_by_product ON product_events (account_id, product_id, event_time_utc);

-- trackID to the event(s) stored for it.
CREATE TABLE track_index (
  event_id         uuid PRIMARY KEY,
  track_id         uuid NOT NULL,
  account_id       uuid NOT NULL,
  event_type       text NOT NULL,
  stream_name      text NOT NULL,
  stream_position  bigint NOT NULL,
  global_position  bigint NOT NULL,
  recorded_at      timestamptz NOT NULL
);
CREATE INDEX track_index_by_track ON track_index (track_id);

-- Down Migration

DROP TABLE track_index;
DROP TABLE product_events;
DROP TABLE products;
DROP TABLE user_events;
DROP TABLE lead_merges;
DROP TABLE leads;
DROP FUNCTION iso_utc(timestamptz);
DROP TABLE projection_checkpoints;
