// Window starts are whole milliseconds, so that the JavaScript Date read back matches them exactly.
// An expired window starts afresh, for whatever body comes now.
// A key's window is that of its first request ($4 hours): a browser key's is longer (docs/browser.md).
export const openWindow = `INSERT INTO idempotency_keys AS k (account_id, endpoint, key, window_start, body_hash, window_hours)
  VALUES ($1, $2, $3, date_trunc('milliseconds', now()), $5, $4)
  ON CONFLICT (account_id, endpoint, key) DO UPDATE SET
    window_hours = CASE WHEN k.window_start < now() - make_interval(hours => k.window_hours) THEN $4 ELSE k.window_hours END,
    window_start = CASE WHEN k.window_start < now() - make_interval(hours => k.window_hours)
                        THEN date_trunc('milliseconds', now()) ELSE k.window_start END,
    body_hash = CASE WHEN k.window_start < now() - make_interval(hours => k.window_hours) THEN $5 ELSE k.body_hash END,
    reply = CASE WHEN k.window_start < now() - make_interval(hours => k.window_hours) THEN NULL ELSE k.reply END
  RETURNING window_start, window_hours, body_hash, reply`;

export const recordReply = `UPDATE idempotency_keys SET reply = $5
  WHERE account_id = $1 AND endpoint = $2 AND key = $3 AND window_start = $4 AND reply IS NULL`;

export const release = `DELETE FROM idempotency_keys
  WHERE account_id = $1 AND endpoint = $2 AND key = $3 AND window_start = $4 AND body_hash = $5 AND reply IS NULL`;

/** $1: the shortest window, so that the index on window_start narrows the rows to look at. */
export const forgetExpired = `DELETE FROM idempotency_keys
  WHERE window_start < now() - make_interval(hours => $1) AND window_start < now() - make_interval(hours => window_hours)`;
