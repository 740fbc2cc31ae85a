-- Up Migration

-- The secondary indexes of a projection's tables, dropped while a whole rebuild loads them and made
-- again when it finishes (docs/projections.md, Rebuild): one index build per table rather than an
-- index update per row. Kept here so that a worker that dies meanwhile leaves them to the next.
CREATE TABLE projection_rebuild_indexes (
  projection  text NOT NULL,
  index_name  text NOT NULL,
  definition  text NOT NULL,
  PRIMARY KEY (projection, index_name)
);

-- Down Migration

DROP TABLE projection_rebuild_indexes;
