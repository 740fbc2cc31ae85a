-- Up Migration

-- The event ids each projection has applied, for event stores that may deliver an id more than
-- once (EventStoreDB deduplicates appends only on a best-effort basis). Written in the batch's
-- transaction, so an id counts as applied exactly when its effects are committed.
CREATE TABLE projection_applied_events (
  projection  text NOT NULL,
  event_id    uuid NOT NULL,
  PRIMARY KEY (projection, event_id)
);

-- Down Migration

DROP TABLE projection_applied_events;
