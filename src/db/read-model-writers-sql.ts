/**
 * Transactions that write read models, and never append events, say so by holding this shared
 * advisory lock (keys 7302, 0; 7301 is the per-stream lock of append_events) from their start.
 * The Postgres store's catch-up read does not wait for them (catchUpFrontier below): otherwise a
 * projection batch, open while its process folds the page, holds back every event appended after
 * it began, for every reader, and four projections in turn keep the newest events out of sight
 * for seconds under steady ingest (docs/performance.md).
 */
export const declareReadModelWriter = 'SELECT pg_advisory_xact_lock_shared(7302, 0)';

/**
 * The transaction id below which every event is committed or will never be: the oldest
 * transaction still running at the statement's snapshot, leaving out the declared read-model
 * writers. Read once per statement (pg_locks, materialised once). A writer that ends between the
 * snapshot and the read of pg_locks is not found there and is waited for, which is only cautious.
 */
export const catchUpFrontier = `(WITH locks AS MATERIALIZED (
      SELECT locktype, classid, objid, objsubid, virtualtransaction, transactionid, mode, granted FROM pg_locks),
    read_model_writers AS (
      SELECT t.transactionid FROM locks w JOIN locks t ON t.virtualtransaction = w.virtualtransaction
      WHERE w.locktype = 'advisory' AND w.classid = 7302 AND w.objid = 0 AND w.objsubid = 2 AND w.granted
        AND t.locktype = 'transactionid' AND t.mode = 'ExclusiveLock' AND t.granted)
    SELECT coalesce(min(running), pg_snapshot_xmax(pg_current_snapshot()))
    FROM pg_snapshot_xip(pg_current_snapshot()) running
    WHERE xid(running) NOT IN (SELECT transactionid FROM read_model_writers))`;
