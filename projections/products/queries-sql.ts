/** SQL of the read queries on the products model (queries.ts). */

import { payloadColumns, payloadText } from '../reply-bytes.js';

/**
 * The list's order: newest first by when each product was first sent (its first submission's
 * global position, which later submissions keep), ties by productId. A product changed while one
 * pages keeps its place, so that paging neither skips nor repeats it. Index products_list.
 */
const listOrder = (alias: string): string => `${alias}.created_position DESC, ${alias}.product_id DESC`;

/** The columns of a product, `properties` given as its select item (whole, or measured for a list). */
const productColumns = (properties: string): string =>
  `p.product_id, ${properties}, p.sent_by_user_id, p.version, p.created_position, iso_utc(p.created_at) AS created_at, iso_utc(p.changed_at) AS changed_at`;

/** Properties of a listed product: there only when small (payloadColumns), measured on the page's rows only. */
const listedColumns = productColumns(payloadColumns('p.properties', 'properties', 's.t'));

/** After the cursor ($3 created_position, $4 productId); the first condition lets the index scan start there. */
const afterCursor = `($3::bigint IS NULL OR (p.created_position <= $3::bigint AND (p.created_position, p.product_id) < ($3::bigint, $4::text)))`;

/** The product $2 of account $1, in full. */
export const oneProduct = `SELECT ${productColumns('p.properties')} FROM products p WHERE p.account_id = $1 AND p.product_id = $2`;

/** A page of the products list of account $1: $2 rows at most, after the cursor ($3, $4; null: from the newest). */
export const listProducts = `SELECT ${listedColumns}
  FROM (
    SELECT * FROM products p WHERE p.account_id = $1 AND ${afterCursor}
    ORDER BY ${listOrder('p')} LIMIT $2
  ) p
  ${payloadText('p.properties', 's')}
  ORDER BY ${listOrder('p')}`;

/**
 * A page of the products whose productId holds $5 (a LIKE pattern, lowered as the ids are: the
 * same lower() on both sides, whatever the database's locale), parameters otherwise as
 * listProducts's. It walks at most $6 products of the list in order, by the index alone (ids and
 * positions), so that a rare term never reads the account's every product in one request; the
 * budget's last row comes back too (`scanned` = $6) when the walk reached it: the list goes on past it.
 */
export const searchProducts = `SELECT ${listedColumns}, w.matches, w.scanned
  FROM (
    SELECT w.* FROM (
      SELECT p.product_id, p.created_position, lower(p.product_id) LIKE lower($5) AS matches,
        row_number() OVER (ORDER BY ${listOrder('p')}) AS scanned
      FROM (
        SELECT p.product_id, p.created_position FROM products p WHERE p.account_id = $1 AND ${afterCursor}
        ORDER BY ${listOrder('p')} LIMIT $6
      ) p
    ) w
    WHERE w.matches OR w.scanned = $6
    ORDER BY ${listOrder('w')} LIMIT $2 + 1
  ) w
  JOIN products p ON p.account_id = $1 AND p.product_id = w.product_id
  ${payloadText('p.properties', 's')}
  ORDER BY ${listOrder('p')}`;

/**
 * Events of product $2 of account $1, latest first, with their trackID (null until the track index
 * has the event): $3 of them at most, after the cursor ($4 event_time_utc, $5 global_position;
 * null: from the latest). Event data larger than a list shows stays in PostgreSQL (payloadColumns).
 */
export const productEvents = `SELECT e.event_id, e.user_id, e.event_name, e.event_time, iso_utc(e.event_time_utc) AS event_time_utc,
    ${payloadColumns('e.event_data', 'event_data', 's.t')}, iso_utc(e.received_at) AS received_at, e.global_position, t.track_id
  FROM (
    SELECT * FROM product_events e
    WHERE e.account_id = $1 AND e.product_id = $2
      AND ($4::timestamptz IS NULL OR (e.event_time_utc <= $4::timestamptz AND (e.event_time_utc, e.global_position) < ($4::timestamptz, $5::bigint)))
    ORDER BY e.event_time_utc DESC, e.global_position DESC
    LIMIT $3
  ) e
  ${payloadText('e.event_data', 's')}
  LEFT JOIN track_index t ON t.event_id = e.event_id
  ORDER BY e.event_time_utc DESC, e.global_position DESC`;

/** Whether account $1 knows product $2: submitted, or named by a product event. */
export const productKnown = `SELECT EXISTS (SELECT 1 FROM products WHERE account_id = $1 AND product_id = $2)
  OR EXISTS (SELECT 1 FROM product_events WHERE account_id = $1 AND product_id = $2) AS known`;
