/** SQL of the ingest activity: the recorder's writes and the warnings and overview reads. */

/** Counts per account, minute and endpoint, added to those already there. */
export const addMinuteCounts = `
  INSERT INTO ingest_activity_minutes AS m (account_id, minute, endpoint, accepted, rejected)
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::bigint[], $5::bigint[])
  ON CONFLICT (account_id, minute, endpoint)
  DO UPDATE SET accepted = m.accepted + EXCLUDED.accepted, rejected = m.rejected + EXCLUDED.rejected`;

/** Rejections per account, hour, endpoint, reason and field, added to those already there. */
export const addHourlyRejections = `
  INSERT INTO ingest_rejections_hourly AS h (account_id, hour, endpoint, reason, field, count, last_seen_at)
  SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[])
  ON CONFLICT (account_id, hour, endpoint, reason, field)
  DO UPDATE SET count = h.count + EXCLUDED.count, last_seen_at = greatest(h.last_seen_at, EXCLUDED.last_seen_at)`;

/**
 * Rejected items, in the order they were recorded (the id keeps it, also for items of one
 * millisecond), except those naming a person that a pending erasure of their account names
 * (docs/decisions.md, Erasure): its userId, every anonymousId merged into that user, its
 * anonymousId (the identity map finds them by the user's pseudonym, as the runner does). An item
 * names one as deleteRejectedItems (src/erasure/sql.ts) finds it: as a JSON string or quoted '...'
 * in its excerpt or message. The check is part of the insert, so that no erasure comes between
 * them; the batch's accounts with no pending erasure cost one probe of an index (migrations:
 * erasures-of-account). The hourly counts still count what is left out.
 */
export const insertRejectedItems = `
  WITH items AS (
    SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::text[], $8::text[], $9::boolean[], $10::text[])
      WITH ORDINALITY AS i(account_id, at, endpoint, reason, field, status, message, excerpt, truncated, client, n)
  ),
  erased_ids AS MATERIALIZED (
    SELECT e.account_id, p.id FROM erasures e
    CROSS JOIN LATERAL (
      SELECT e.user_id UNION ALL SELECT e.anonymous_id
      UNION ALL SELECT m.anonymous_id FROM identity_merges m WHERE m.account_id = e.account_id AND m.user_ref = e.user_ref
    ) AS p(id)
    WHERE e.account_id = ANY (ARRAY(SELECT DISTINCT unnest($1::uuid[]))) AND e.state = 'pending' AND p.id IS NOT NULL
  )
  INSERT INTO ingest_rejected_items (account_id, at, endpoint, reason, field, status, message, excerpt, truncated, client)
  SELECT i.account_id, i.at, i.endpoint, i.reason, i.field, i.status, i.message, i.excerpt, i.truncated, i.client
  FROM items i
  WHERE NOT EXISTS (
    SELECT 1 FROM erased_ids d
    WHERE d.account_id = i.account_id
      AND (strpos(coalesce(i.excerpt, '') || i.message, to_json(d.id)::text) > 0 OR strpos(coalesce(i.excerpt, '') || i.message, '''' || d.id || '''') > 0)
  )
  ORDER BY i.n`;

/** Keeps the latest $2 rejected items of each account of $1. */
export const pruneRejectedItems = `
  DELETE FROM ingest_rejected_items r
  USING (
    SELECT a.id AS account_id,
           (SELECT id FROM ingest_rejected_items WHERE account_id = a.id ORDER BY id DESC OFFSET $2 - 1 LIMIT 1) AS oldest_kept
    FROM unnest($1::uuid[]) AS a(id)
  ) k
  WHERE r.account_id = k.account_id AND r.id < k.oldest_kept`;

/** Retention: per-minute counts 7 days, hourly rejections and rejected items 30 days. */
export const deleteExpired = [
  `DELETE FROM ingest_activity_minutes WHERE minute < now() - interval '7 days'`,
  `DELETE FROM ingest_rejections_hourly WHERE hour < now() - interval '30 days'`,
  `DELETE FROM ingest_rejected_items WHERE at < now() - interval '30 days'`,
];

export interface RejectedItemRow {
  at: Date;
  endpoint: string;
  reason: string;
  field: string;
  status: number;
  message: string;
  excerpt: string | null;
  truncated: boolean;
  client: string | null;
}

const rejectedItemColumns = 'at, endpoint, reason, field, status, message, excerpt, truncated, client';

/**
 * One account's rejected items, the latest first, older than the item $3 (null: from the latest),
 * only those of reason $4, field $5 and endpoint $6 where given (null: any): each row is small
 * (message and excerpt are at most 2 KB each), so $2 of them are bounded in bytes. The account
 * keeps its latest 1,000 items, so a filter reads at most those.
 */
export const rejectedItemsBefore = `
  SELECT id, ${rejectedItemColumns} FROM ingest_rejected_items
  WHERE account_id = $1 AND ($3::bigint IS NULL OR id < $3)
    AND ($4::text IS NULL OR reason = $4) AND ($5::text IS NULL OR field = $5) AND ($6::text IS NULL OR endpoint = $6)
  ORDER BY id DESC LIMIT $2`;

export interface GroupRow {
  reason: string;
  field: string;
  endpoint: string;
  count: number;
  last_seen_at: Date;
  examples: RejectedItemRow[];
}

/**
 * One account's rejections of the last 30 days by reason, field and endpoint, each with its latest
 * $2 items, the latest seen first. At most $3 groups: fields are the schemas' own, so a client
 * cannot make them many, and the bound keeps the reply small whatever it sent.
 */
export const rejectionsByGroup = `
  SELECT g.reason, g.field, g.endpoint, g.count, g.last_seen_at,
         coalesce((SELECT json_agg(e ORDER BY e.id DESC) FROM (
           SELECT id, ${rejectedItemColumns} FROM ingest_rejected_items
           WHERE account_id = $1 AND reason = g.reason AND field = g.field AND endpoint = g.endpoint ORDER BY id DESC LIMIT $2
         ) e), '[]') AS examples
  FROM (
    SELECT reason, field, endpoint, sum(count)::bigint AS count, max(last_seen_at) AS last_seen_at
    FROM ingest_rejections_hourly
    WHERE account_id = $1 AND hour >= date_trunc('hour', now(), 'UTC') - interval '30 days'
    GROUP BY reason, field, endpoint
    ORDER BY max(last_seen_at) DESC, reason, field, endpoint
    LIMIT $3
  ) g
  ORDER BY g.last_seen_at DESC, g.reason, g.field, g.endpoint`;

export interface ActivityRow {
  start: Date;
  endpoint: string;
  accepted: number;
  rejected: number;
}

/** One account's counts per minute of the last 60 minutes, oldest first. */
export const countsPerMinute = `
  SELECT minute AS start, endpoint, accepted, rejected FROM ingest_activity_minutes
  WHERE account_id = $1 AND minute >= date_trunc('minute', now(), 'UTC') - interval '59 minutes'
  ORDER BY minute, endpoint`;

/** One account's counts per hour of the last 168 hours, oldest first. */
export const countsPerHour = `
  SELECT date_trunc('hour', minute, 'UTC') AS start, endpoint, sum(accepted)::bigint AS accepted, sum(rejected)::bigint AS rejected
  FROM ingest_activity_minutes
  WHERE account_id = $1 AND minute >= date_trunc('hour', now(), 'UTC') - interval '167 hours'
  GROUP BY 1, 2 ORDER BY 1, 2`;
