/**
 * SQL the bench watches the projections with (docs/projections.md, Parts, claims and checkpoints):
 * each (projection, account) has its own cursor, so the projections are caught up when every
 * account's cursor of every projection is at that account's last event in catch-up order.
 */

/**
 * Per projection ($1, the names), the accounts with events whose cursor is not at their last event
 * yet (no cursor counts as behind). The last event of an account comes from the index
 * events_by_account, read backwards: one row per account, whatever the store's size.
 */
export const accountsBehind = `SELECT p.projection, count(*) FILTER (WHERE c.checkpoint IS DISTINCT FROM h.head)::int AS behind
  FROM unnest($1::text[]) AS p(projection)
  CROSS JOIN (
    SELECT a.id::text AS account_id, last.head FROM accounts a
    CROSS JOIN LATERAL (
      SELECT e.transaction_id::text || ':' || e.global_position AS head FROM events e
      WHERE e.account_id = a.id::text
      ORDER BY e.transaction_id DESC, e.global_position DESC
      LIMIT 1) last
  ) h
  LEFT JOIN projection_account_checkpoints c ON c.projection = p.projection AND c.account_id = h.account_id
  GROUP BY p.projection`;

/** Events applied per projection, over every account's cursor. */
export const appliedByProjection = `SELECT projection, coalesce(sum(events_applied), 0)::bigint::text AS applied
  FROM projection_account_checkpoints GROUP BY projection`;

/** Whether any cursor exists yet: a worker has begun applying. */
export const anyCursor = 'SELECT EXISTS (SELECT 1 FROM projection_account_checkpoints) AS started';

/**
 * The parts each live worker holds now (owner alive, lease running), as the status counts them
 * (projections/runner/status.ts), and the claims made so far (the sum of the epochs).
 */
export const partsHeld = `SELECT w.name, count(p.part)::int AS parts, array_agg(p.part ORDER BY p.part) FILTER (WHERE p.part IS NOT NULL) AS held
  FROM projection_workers w
  LEFT JOIN projection_parts p ON p.owner = w.worker_id AND p.lease_expires_at > clock_timestamp()
  WHERE w.expires_at > clock_timestamp()
  GROUP BY w.name`;

export const claimsMade = 'SELECT coalesce(sum(epoch), 0)::bigint::text AS claims FROM projection_parts';

/** Events applied in each part's accounts, by the part's owner's name (null: nobody holds it now). */
export const appliedByOwner = `SELECT p.owner_name AS name, coalesce(sum(c.events_applied), 0)::bigint::text AS applied
  FROM projection_account_checkpoints c
  JOIN projection_accounts a ON a.account_id = c.account_id
  JOIN projection_parts p ON p.part = a.part
  GROUP BY p.owner_name`;

/**
 * Back to nothing projected, with no worker alive: the read models ($1, the projections' tables)
 * emptied, every cursor, registered account, applied id and parked event removed, discovery from
 * the start, parts free. The store as the fill left it, so that the next catch-up starts as the
 * first did.
 */
export const forgetProjected = (tables: readonly string[]): string[] => [
  `TRUNCATE ${[...tables, 'projection_account_checkpoints', 'projection_accounts', 'projection_applied_events', 'projection_parked_events'].join(', ')}`,
  'UPDATE projection_discovery SET checkpoint = NULL',
  'UPDATE projection_checkpoints SET checkpoint = NULL, events_applied = 0, updated_at = now()',
  'UPDATE projection_parts SET owner = NULL, owner_name = NULL, lease_expires_at = NULL, claimed_at = NULL, lag = NULL, lag_at = NULL',
  'DELETE FROM projection_workers',
];
