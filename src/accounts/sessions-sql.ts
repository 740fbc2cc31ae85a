/** SQL of dashboard sessions (table dashboard_sessions). */

export const insertAccountSession = `INSERT INTO dashboard_sessions (id_hash, kind, account_id, token_id, expires_at)
  VALUES ($1, 'account', $2, $3, now() + make_interval(secs => $4))`;

export const insertOperatorSession = `INSERT INTO dashboard_sessions (id_hash, kind, admin_fingerprint, admin_generation, expires_at)
  VALUES ($1, 'operator', $2, $3, now() + make_interval(secs => $4))`;

/**
 * A session that has not expired, with its account; an account session whose token was revoked is
 * not found.
 */
export const selectSession = `SELECT s.kind, s.admin_fingerprint, s.admin_generation, s.token_id, a.id AS account_id, a.name, a.license_code
  FROM dashboard_sessions s
  LEFT JOIN access_tokens t ON t.id = s.token_id
  LEFT JOIN accounts a ON a.id = s.account_id
  WHERE s.id_hash = $1 AND s.expires_at > now() AND (s.kind = 'operator' OR t.revoked_at IS NULL)`;

export const deleteSession = 'DELETE FROM dashboard_sessions WHERE id_hash = $1';

/** Answered from the expires_at index: cheap enough to run at every sign-in. */
export const deleteExpiredSessions = 'DELETE FROM dashboard_sessions WHERE expires_at <= now()';

export const deleteSessionsOfTokens = 'DELETE FROM dashboard_sessions WHERE token_id = ANY($1::uuid[])';

/** The admin token last started with (table admin_token_generation), locked until the transaction ends. */
export const lockAdminTokenGeneration = 'SELECT salt, token_hash, generation FROM admin_token_generation FOR UPDATE';

/** Another admin token (null: none) than the last one: the next generation. */
export const nextAdminTokenGeneration = `UPDATE admin_token_generation SET salt = $1, token_hash = $2, generation = generation + 1
  RETURNING generation`;
