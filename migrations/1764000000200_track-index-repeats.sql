-- Up Migration

-- Later copies of an event id the track index already holds: EventStoreDB recognises a repeated id
-- only while its cache of recent ids remembers it, so a retry can store the same id again further
-- on in its stream. The first copy stays the one row of track_index (live events, timelines and
-- the audit list it once); each later copy is recorded here, by where it is stored, so that the
-- audit can say where else the id was stored. A second delivery of the same copy adds nothing.
CREATE TABLE track_index_repeats (
  event_id         uuid NOT NULL,
  stream_name      text NOT NULL,
  stream_position  bigint NOT NULL,
  global_position  bigint NOT NULL,
  recorded_at      timestamptz NOT NULL,
  PRIMARY KEY (event_id, stream_name, stream_position)
);

-- Down Migration

DROP TABLE track_index_repeats;
