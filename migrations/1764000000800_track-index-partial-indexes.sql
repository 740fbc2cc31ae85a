-- Up Migration

-- The track index's secondary indexes were a quarter of what PostgreSQL spent applying it. Two of
-- them now hold only the rows their query reads:
--
-- An event's id is its trackID, but for the further events one item stores (a merge sent with a
-- user: its id is derived from the trackID). A trackID's first event is found by the primary key
-- (event_id = track_id); only the others need an index by trackID.
CREATE INDEX track_index_by_track_other ON track_index (track_id) WHERE track_id <> event_id;
DROP INDEX track_index_by_track;

-- A lead's timeline reads the person streams' events of these types only: product events are left
-- out of the index by stream (the predicate is the timeline's condition, word for word).
CREATE INDEX track_index_timeline ON track_index (stream_name, global_position DESC)
  WHERE event_type IN ('UserUpserted', 'ProfilesMerged', 'EventTracked');
DROP INDEX track_index_by_stream;

-- Down Migration

CREATE INDEX track_index_by_stream ON track_index (stream_name, global_position DESC);
DROP INDEX track_index_timeline;
CREATE INDEX track_index_by_track ON track_index (track_id);
DROP INDEX track_index_by_track_other;
