/** SQL of browser keys (table browser_keys). */

const fields = 'id, label, origins, created_at, last_used_at';

export const insertBrowserKey = `INSERT INTO browser_keys (id, account_id, label, key_hash, origins) VALUES ($1, $2, $3, $4, $5)
  RETURNING ${fields}`;

/** The active keys of an account, oldest first; never their hashes. */
export const selectActiveBrowserKeys = `SELECT ${fields} FROM browser_keys
  WHERE account_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`;

export const countActiveBrowserKeys = 'SELECT count(*)::int AS active FROM browser_keys WHERE account_id = $1 AND revoked_at IS NULL';

/** New label and origins of an active key; a null parameter keeps the field. */
export const updateBrowserKey = `UPDATE browser_keys SET label = coalesce($3, label), origins = coalesce($4, origins), changed_xid = pg_current_xact_id()
  WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL RETURNING ${fields}`;

export const revokeBrowserKey = `UPDATE browser_keys SET revoked_at = now(), changed_xid = pg_current_xact_id()
  WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL RETURNING id`;

/** Marks keys used in the current minute; a row already marked for it is left alone (its changed_xid too). */
export const markBrowserKeysUsed = `UPDATE browser_keys SET last_used_at = date_trunc('minute', now())
  WHERE id = ANY($1::uuid[]) AND (last_used_at IS NULL OR last_used_at < date_trunc('minute', now()))`;

/**
 * The keys changed by transactions at or after `$1` (the currentXmin of the look before; null:
 * every active key), with the license code of their account.
 */
export const selectChangedBrowserKeys = `SELECT k.id, k.account_id, a.name, a.license_code, k.key_hash, k.origins, k.revoked_at IS NOT NULL AS revoked
  FROM browser_keys k JOIN accounts a ON a.id = k.account_id
  WHERE CASE WHEN $1::xid8 IS NULL THEN k.revoked_at IS NULL ELSE k.changed_xid >= $1::xid8 END`;

/**
 * Taken before each look: a transaction still running then has an id at or past it, so the next
 * look, which reads changes from it on, cannot miss a change committed late.
 */
export const currentXmin = 'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS next_xmin';
