/** SQL of access tokens (table access_tokens). */

export const insertToken = `INSERT INTO access_tokens (id, account_id, label, scope, token_hash) VALUES ($1, $2, $3, $4, $5)
  RETURNING id, label, scope, created_at, last_used_at`;

/** The active tokens of an account, oldest first; never their hashes. */
export const selectActiveTokens = `SELECT id, label, scope, created_at, last_used_at FROM access_tokens
  WHERE account_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`;

/** The account of a license code with the hashes of its active tokens (none: one row of nulls). */
export const selectAccountTokens = `SELECT a.id AS account_id, a.name, a.license_code, t.id AS token_id, t.scope, t.token_hash
  FROM accounts a LEFT JOIN access_tokens t ON t.account_id = a.id AND t.revoked_at IS NULL
  WHERE a.license_code = $1`;

export const countActiveTokens = 'SELECT count(*)::int AS active FROM access_tokens WHERE account_id = $1 AND revoked_at IS NULL';

export const revokeToken = `UPDATE access_tokens SET revoked_at = now() WHERE id = $1 AND account_id = $2 AND revoked_at IS NULL
  RETURNING id`;

export const revokeAllTokens = 'UPDATE access_tokens SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL RETURNING id';

/** Marks tokens used in the current minute; a row already marked for it is left alone. */
export const markTokensUsed = `UPDATE access_tokens SET last_used_at = date_trunc('minute', now())
  WHERE id = ANY($1::uuid[]) AND (last_used_at IS NULL OR last_used_at < date_trunc('minute', now()))`;

/** The active token a hash belongs to, whatever its account (to tell an access token from a wrong admin token). */
export const selectActiveTokenByHash = 'SELECT id FROM access_tokens WHERE token_hash = $1 AND revoked_at IS NULL';

/** The license code of the account whose active token has this hash (a Segment write key, docs/segment.md). */
export const selectLicenseOfTokenHash = `SELECT a.license_code FROM access_tokens t JOIN accounts a ON a.id = t.account_id
  WHERE t.token_hash = $1 AND t.revoked_at IS NULL`;
