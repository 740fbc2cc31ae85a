/** SQL of the browser keys' shared counts (src/http/browser-limits.ts), in the rate limiter's table rate_limits. */

/** Adds each key's count of this process ($2) to its row of the window ($1 keys), and gives the totals. */
export const addCounts = `INSERT INTO rate_limits AS r (key, points, expire)
  SELECT key, points, $3::bigint FROM unnest($1::text[], $2::int[]) AS t(key, points)
  ON CONFLICT (key) DO UPDATE SET points = r.points + EXCLUDED.points
  RETURNING key, points`;

/** The rows of windows that ended (expire: the window's end, in epoch milliseconds). */
export const forgetPastWindows = `DELETE FROM rate_limits WHERE key LIKE 'browserkey:%' AND expire <= $1::bigint`;
