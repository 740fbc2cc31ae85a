/** SQL of parked events (table projection_parked_events). */

export interface ParkedRow {
  projection: string;
  event_id: string;
  parked_order: string;
  stream_name: string;
  stream_position: number;
  global_position: number;
  event_type: string;
  account_id: string | null;
  error: string;
  sqlstate: string | null;
  attempts: number;
  parked_at: Date;
  last_attempt_at: Date;
}

/**
 * Parks an event ($2..$9) of projection $1, in the batch's transaction. An event parked before (read
 * again, or retried) keeps its place in the order and counts one more attempt.
 */
export const park = `INSERT INTO projection_parked_events
    (projection, event_id, stream_name, stream_position, global_position, event_type, account_id, error, sqlstate)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT (projection, event_id) DO UPDATE SET
    error = excluded.error, sqlstate = excluded.sqlstate,
    attempts = projection_parked_events.attempts + 1, last_attempt_at = now()`;

/** The same, for an event that failed again when retried. */
export const failedAgain = `UPDATE projection_parked_events
  SET error = $3, sqlstate = $4, attempts = attempts + 1, last_attempt_at = now()
  WHERE projection = $1 AND event_id = $2`;

export const unpark = 'DELETE FROM projection_parked_events WHERE projection = $1 AND event_id = $2';

/** A rebuild parks again whatever its replay cannot apply. */
export const forgetParked = 'DELETE FROM projection_parked_events WHERE projection = $1';

/** The parked events of projection $1, in the order they were parked. */
export const selectParked = 'SELECT * FROM projection_parked_events WHERE projection = $1 ORDER BY parked_order';

export const countParkedByProjection = 'SELECT projection, count(*)::int AS parked FROM projection_parked_events GROUP BY projection';

export const countParked = 'SELECT count(*)::int AS parked FROM projection_parked_events WHERE projection = $1';

/** Number parked per projection, and the latest $1 of each. */
export const parkedSummary = `SELECT * FROM (
    SELECT p.*, count(*) OVER (PARTITION BY projection)::int AS parked,
           row_number() OVER (PARTITION BY projection ORDER BY parked_order DESC) AS recency
    FROM projection_parked_events p) latest
  WHERE recency <= $1
  ORDER BY projection, parked_order DESC`;

/** The cursors of projection $1 of the accounts that have parked events, locked in a stable order. */
export const lockCursorsOfParked = `SELECT account_id FROM projection_account_checkpoints
  WHERE projection = $1 AND account_id IN (SELECT account_id FROM projection_parked_events WHERE projection = $1)
  ORDER BY account_id
  FOR UPDATE`;

/** Parked events of account $2 (its rebuild parks again what it cannot apply). */
export const forgetParkedOfAccount = 'DELETE FROM projection_parked_events WHERE projection = $1 AND account_id = $2';

/**
 * Held by a batch (through its checkpoint update) and by a retry for their whole transaction: a
 * retry never interleaves with a batch that reads and rewrites the same rows.
 */
export const lockCheckpoint = 'SELECT * FROM projection_checkpoints WHERE projection = $1 FOR UPDATE';
