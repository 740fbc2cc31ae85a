-- Up Migration

-- Warnings grouped by reason, field and endpoint (docs/api.md, Ingestion warnings): the field a
-- rejection is about is a top-level field of the item ('eventTime', 'attributes'),
-- 'userId/anonymousId', 'unknown field', or '' for the request or item as a whole. Rows written
-- before have ''.
ALTER TABLE ingest_rejections_hourly ADD COLUMN field text NOT NULL DEFAULT '';
ALTER TABLE ingest_rejections_hourly DROP CONSTRAINT ingest_rejections_hourly_pkey;
ALTER TABLE ingest_rejections_hourly ADD PRIMARY KEY (account_id, hour, endpoint, reason, field);

ALTER TABLE ingest_rejected_items ADD COLUMN field text NOT NULL DEFAULT '';
-- A group's latest examples, and the recent list filtered by reason, field or endpoint.
CREATE INDEX ingest_rejected_items_group ON ingest_rejected_items (account_id, reason, field, endpoint, id);

-- Down Migration

DROP INDEX ingest_rejected_items_group;
ALTER TABLE ingest_rejected_items DROP COLUMN field;
DELETE FROM ingest_rejections_hourly WHERE field <> '';
ALTER TABLE ingest_rejections_hourly DROP CONSTRAINT ingest_rejections_hourly_pkey;
ALTER TABLE ingest_rejections_hourly DROP COLUMN field;
ALTER TABLE ingest_rejections_hourly ADD PRIMARY KEY (account_id, hour, endpoint, reason);
