/** SQL of projection checkpoints (table projection_checkpoints). */

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

/** First key of the advisory locks held by active projection workers (the second is the projection's). */
export const projectionLockClass = 7302;

export const ensureCheckpoint = 'INSERT INTO projection_checkpoints (projection) VALUES ($1) ON CONFLICT DO NOTHING';

/** Run by a worker that has just taken the lock. */
export const markActive = `UPDATE projection_checkpoints SET active_worker = $2, active_since = now() WHERE projection = $1`;

export const selectCheckpoint = 'SELECT * FROM projection_checkpoints WHERE projection = $1';

export const selectCheckpoints = 'SELECT * FROM projection_checkpoints';

/**
 * Moves the checkpoint from $2 to $3 after a batch of $4 events, in the batch's transaction. It
 * matches no row if the checkpoint is not where this worker read from, or a rebuild is wanted: the
 * batch is then rolled back.
 */
export const advanceCheckpoint = `UPDATE projection_checkpoints
  SET checkpoint = $3, events_applied = events_applied + $4, updated_at = now()
  WHERE projection = $1 AND checkpoint IS NOT DISTINCT FROM $2 AND rebuild_requested_at IS NULL
  RETURNING *`;

/**
 * Back to the start, with $2 events to replay; run with the truncation of the read models. Only
 * the request the worker saw ($3, read back to the millisecond) is cleared: one made meanwhile
 * starts another rebuild after it.
 */
export const restartCheckpoint = `UPDATE projection_checkpoints
  SET checkpoint = NULL, events_applied = 0, updated_at = now(),
      rebuild_requested_at = CASE WHEN date_trunc('milliseconds', rebuild_requested_at) = $3 THEN NULL ELSE rebuild_requested_at END,
      rebuild_started_at = clock_timestamp(), rebuild_finished_at = NULL, rebuild_target = $2
  WHERE projection = $1
  RETURNING *`;

/**
 * Of the event ids $2, those projection $1 has not applied yet, each once; they count as applied
 * from now on (in the batch's transaction).
 */
export const claimEventIds = `INSERT INTO projection_applied_events (projection, event_id)
  SELECT $1, unnest($2::uuid[])
  ON CONFLICT DO NOTHING
  RETURNING event_id::text AS event_id`;

/** A rebuild starts with no id applied. */
export const forgetAppliedEventIds = 'DELETE FROM projection_applied_events WHERE projection = $1';

export const finishRebuild = `UPDATE projection_checkpoints SET rebuild_finished_at = now()
  WHERE projection = $1 AND rebuild_started_at IS NOT NULL AND rebuild_finished_at IS NULL
  RETURNING *`;

export const requestRebuild = `INSERT INTO projection_checkpoints (projection, rebuild_requested_at) VALUES ($1, now())
  ON CONFLICT (projection) DO UPDATE SET rebuild_requested_at = now()
  RETURNING *`;

/** Whether this session got the projection's lock; it is held until the session ends. */
export const tryLock = `SELECT pg_try_advisory_lock(${projectionLockClass}, $1) AS locked`;

/** Sessions holding a projection lock in this database. */
export const lockHolders = `SELECT l.objid::bigint AS lock_key, a.pid, a.application_name
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.classid = ${projectionLockClass} AND l.objsubid = 2
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`;

/**
 * A worker's session is named `tracking-projection <projection> <pid@host>` (at most 63
 * characters: the host is what gets cut), so that status can tell active and standby workers.
 */
const sessionPrefix = 'tracking-projection';

export const sessionName = (projection: string, worker: string): string => `${sessionPrefix} ${projection} ${worker}`.slice(0, 63);

export function parseSessionName(name: string): { projection: string; worker: string } {
  const [, projection = '?', worker = '?'] = name.split(' ');
  return { projection, worker };
}

/** $1 the session's name (sessionName). */
export const nameSession = "SELECT set_config('application_name', $1, false)";

/** $1 how long an idle session lives, e.g. '30000ms'. */
export const setIdleSessionTimeout = "SELECT set_config('idle_session_timeout', $1, false)";

/** Sessions of projection workers in this database (active and standby). */
export const workerSessions = `SELECT pid, application_name FROM pg_stat_activity
  WHERE datname = current_database() AND application_name LIKE '${sessionPrefix} %'`;

/** Corrects events_applied by $2: less the events a batch parked, plus those a retry applied. */
export const addToApplied = `UPDATE projection_checkpoints SET events_applied = events_applied + $2 WHERE projection = $1 RETURNING *`;

/**
 * Asks for a rebuild of $1 unless one is already asked for or running; no row when one is. The
 * active worker notices the request (as it does requestRebuild's).
 */
export const requestRebuildUnlessUnderWay = `INSERT INTO projection_checkpoints AS c (projection, rebuild_requested_at) VALUES ($1, now())
  ON CONFLICT (projection) DO UPDATE SET rebuild_requested_at = now()
  WHERE c.rebuild_requested_at IS NULL AND (c.rebuild_started_at IS NULL OR c.rebuild_finished_at IS NOT NULL)
  RETURNING *`;
