/**
 * SQL of the per-projection rows (table projection_checkpoints): rebuild requests and state, and
 * the lower bound of the accounts' cursors (accounts-sql.ts).
 */

export interface CheckpointRow {
  projection: string;
  checkpoint: string | null;
  events_applied: number;
  updated_at: Date;
  rebuild_requested_at: Date | null;
  rebuild_started_at: Date | null;
  rebuild_finished_at: Date | null;
  rebuild_target: number | null;
  active_worker: string | null;
  active_since: Date | null;
}

export const ensureCheckpoint = 'INSERT INTO projection_checkpoints (projection) VALUES ($1) ON CONFLICT DO NOTHING';

export const selectCheckpoint = 'SELECT * FROM projection_checkpoints WHERE projection = $1';

export const selectCheckpoints = 'SELECT * FROM projection_checkpoints';

/**
 * Back to the start, with $2 events to replay; run with the truncation of the read models, by the
 * one worker whose statement finds the request it saw ($3, read back to the millisecond) still
 * there (no row for the others). A request made meanwhile starts another rebuild after it.
 */
export const restartCheckpoint = `UPDATE projection_checkpoints
  SET checkpoint = NULL, events_applied = 0, updated_at = now(), rebuild_requested_at = NULL,
      rebuild_started_at = clock_timestamp(), rebuild_finished_at = NULL, rebuild_target = $2
  WHERE projection = $1 AND date_trunc('milliseconds', rebuild_requested_at) = $3
  RETURNING *`;

/** The cursors of a projection, removed by its rebuild (they start again where each account starts). */
export const forgetCursors = 'DELETE FROM projection_account_checkpoints WHERE projection = $1';

/**
 * Of the event ids $2, those projection $1 has not applied yet, each once; they count as applied
 * from now on (in the batch's transaction).
 */
export const claimEventIds = `INSERT INTO projection_applied_events (projection, event_id, account_id)
  SELECT $1, unnest($2::uuid[]), $3
  ON CONFLICT DO NOTHING
  RETURNING event_id::text AS event_id`;

/** A rebuild starts with no id applied. */
export const forgetAppliedEventIds = 'DELETE FROM projection_applied_events WHERE projection = $1';

export const forgetAppliedEventIdsOfAccount = 'DELETE FROM projection_applied_events WHERE projection = $1 AND account_id = $2';

export const finishRebuild = `UPDATE projection_checkpoints SET rebuild_finished_at = now()
  WHERE projection = $1 AND rebuild_started_at IS NOT NULL AND rebuild_finished_at IS NULL
  RETURNING *`;

export const requestRebuild = `INSERT INTO projection_checkpoints (projection, rebuild_requested_at) VALUES ($1, now())
  ON CONFLICT (projection) DO UPDATE SET rebuild_requested_at = now()
  RETURNING *`;

/** A worker's sessions are named `tracking-projection <pid@host>` (at most 63 characters), for people reading pg_stat_activity. */
export const sessionName = (worker: string): string => `tracking-projection ${worker}`.slice(0, 63);

/** $1 the session's name (sessionName). */
export const nameSession = "SELECT set_config('application_name', $1, false)";

/** $1 how long an idle session lives, e.g. '30000ms'. */
export const setIdleSessionTimeout = "SELECT set_config('idle_session_timeout', $1, false)";

/** $1 how long a session may sit in a transaction without a statement (a paused worker's), e.g. '4000ms'. */
export const setIdleInTransactionTimeout = "SELECT set_config('idle_in_transaction_session_timeout', $1, false)";

/**
 * Asks for a rebuild of $1 unless one is already asked for or running; no row when one is. The
 * active worker notices the request (as it does requestRebuild's).
 */
export const requestRebuildUnlessUnderWay = `INSERT INTO projection_checkpoints AS c (projection, rebuild_requested_at) VALUES ($1, now())
  ON CONFLICT (projection) DO UPDATE SET rebuild_requested_at = now()
  WHERE c.rebuild_requested_at IS NULL AND (c.rebuild_started_at IS NULL OR c.rebuild_finished_at IS NOT NULL)
  RETURNING *`;

/** Events applied per projection, over every account. */
export const appliedByProjection = `SELECT projection, coalesce(sum(events_applied), 0)::bigint::text AS applied
  FROM projection_account_checkpoints GROUP BY projection`;

/** The projection's row, locked, or error 55P03 when another transaction holds it. */
export const lockCheckpointNoWait = 'SELECT projection FROM projection_checkpoints WHERE projection = $1 FOR UPDATE NOWAIT';
