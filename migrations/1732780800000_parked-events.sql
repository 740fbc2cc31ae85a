-- Up Migration

-- Events a projection could not apply (a data error: SQLSTATE classes 22 and 23, or its fold
-- threw), parked so that the projection goes on without them. A rebuild empties a projection's
-- rows here and parks again what its replay cannot apply; `tracking projections retry` applies
-- them again and removes those that now apply.
CREATE TABLE projection_parked_events (
  projection       text NOT NULL,
  event_id         uuid NOT NULL,
  -- The order events were parked in, which is the order they were read in: retries follow it.
  parked_order     bigint GENERATED ALWAYS AS IDENTITY,
  stream_name      text NOT NULL,
  stream_position  bigint NOT NULL,
  global_position  bigint NOT NULL,
  event_type       text NOT NULL,
  account_id       text,
  error            text NOT NULL,
  sqlstate         text,
  attempts         integer NOT NULL DEFAULT 1,
  parked_at        timestamptz NOT NULL DEFAULT now(),
  last_attempt_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (projection, event_id)
);
CREATE INDEX projection_parked_events_order ON projection_parked_events (projection, parked_order);

-- Bytes of each event's data as JSON text, for catch-up reads bounded in bytes: summing it over a
-- page costs no detoasting, whereas measuring the payload at read time would convert every row.
ALTER TABLE events ADD COLUMN data_bytes integer GENERATED ALWAYS AS (octet_length(data::text)) STORED;

-- Down Migration

ALTER TABLE events DROP COLUMN data_bytes;
DROP TABLE projection_parked_events;
