/**
 * SQL of the accounts projections follow and of their cursors (tables projection_accounts,
 * projection_discovery, projection_account_checkpoints).
 */

export interface AccountCheckpointRow {
  projection: string;
  account_id: string;
  checkpoint: string | null;
  events_applied: string;
  updated_at: Date;
  caught_up_at: Date | null;
}

/** $1 account ids, $2 their parts, $3 a checkpoint before each one's first event. */
export const registerAccounts = `INSERT INTO projection_accounts (account_id, part, first_checkpoint)
  SELECT * FROM unnest($1::text[], $2::int[], $3::text[])
  ON CONFLICT DO NOTHING`;

export const selectAccounts = 'SELECT account_id, part, reset_at FROM projection_accounts';

/** Accounts rebuilt ($1: since, exclusive), so that their owners replay them. */
/**
 * The accounts reset after $1, the latest last. The time goes back and forth as text, with its
 * microseconds: a JavaScript Date keeps milliseconds, and a reset read back through one would be
 * later than itself, seen again at every look.
 */
export const accountsResetSince = `SELECT account_id, part, reset_at::text AS reset_at FROM projection_accounts
  WHERE reset_at > $1::timestamptz ORDER BY reset_at`;

/** The latest reset of any account, as text with its microseconds (null: none yet). */
export const latestReset = 'SELECT max(reset_at)::text AS latest FROM projection_accounts';

/** No row while another worker is storing its own (it will have moved the record on). */
export const selectDiscovered = 'SELECT checkpoint FROM projection_discovery FOR UPDATE SKIP LOCKED';

export const storeDiscovered = 'UPDATE projection_discovery SET checkpoint = $1';

/** Where a new cursor of projection $1 for account $2 starts: before the account's first event, and not before the projection's own lower bound. */
export const cursorStart = `SELECT a.first_checkpoint, p.checkpoint AS applied_before
  FROM projection_accounts a LEFT JOIN projection_checkpoints p ON p.projection = $1
  WHERE a.account_id = $2`;

export const createCursor = `INSERT INTO projection_account_checkpoints (projection, account_id, checkpoint) VALUES ($1, $2, $3)
  ON CONFLICT DO NOTHING`;

export const selectCursor = 'SELECT * FROM projection_account_checkpoints WHERE projection = $1 AND account_id = $2';

/**
 * Moves the cursor of projection $1 for account $2 from $3 to $4 after a batch of $5 events, in
 * the batch's transaction: no row when it is not where the batch was read from (another worker
 * moved it, or a rebuild removed it), and the batch is then rolled back. It is the batch's first
 * statement, so the row stays locked until the commit (a retry of parked events waits for it).
 */
export const advanceCursor = `UPDATE projection_account_checkpoints
  SET checkpoint = $4, events_applied = events_applied + $5, updated_at = now()
  WHERE projection = $1 AND account_id = $2 AND checkpoint IS NOT DISTINCT FROM $3
  RETURNING *`;

/** Corrects events_applied by $3 (less what a batch parked, plus what a retry applied). */
export const addToApplied = `UPDATE projection_account_checkpoints SET events_applied = events_applied + $3
  WHERE projection = $1 AND account_id = $2`;

export const markCaughtUp = `UPDATE projection_account_checkpoints SET caught_up_at = now()
  WHERE projection = $1 AND account_id = $2 AND caught_up_at IS NULL`;

/** Accounts whose cursor of projection $1 has not caught up since it was made (a rebuild is done when none is left). */
export const accountsNotCaughtUp = `SELECT count(*)::int AS accounts FROM projection_accounts a
  LEFT JOIN projection_account_checkpoints c ON c.projection = $1 AND c.account_id = a.account_id
  WHERE c.caught_up_at IS NULL`;

/** Events applied by projection $1 over every account. */
export const appliedOverAccounts = `SELECT coalesce(sum(events_applied), 0)::bigint::text AS applied, max(updated_at) AS updated_at
  FROM projection_account_checkpoints WHERE projection = $1`;

export const selectCursors = 'SELECT * FROM projection_account_checkpoints';

export const forgetCursor = 'DELETE FROM projection_account_checkpoints WHERE projection = $1 AND account_id = $2';

/** The account was rebuilt: workers holding its part replay it. */
export const markReset = 'UPDATE projection_accounts SET reset_at = clock_timestamp() WHERE account_id = $1';

export const caughtUpCursorsOfAccount = 'SELECT projection FROM projection_account_checkpoints WHERE account_id = $1 AND caught_up_at IS NOT NULL';
