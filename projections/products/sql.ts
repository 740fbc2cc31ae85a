/** SQL of the products projection. */

import { eventRowColumns, insertRows, onceByEventId } from '../rows-sql.js';

/** The latest submission wins; `version` counts the submissions. */
export const upsertProducts = insertRows(
  'products',
  ['account_id', 'product_id', 'properties', 'sent_by_user_id', 'version', 'created_position', 'created_at', 'changed_at'],
  `(account_id, product_id) DO UPDATE SET
    properties = excluded.properties, sent_by_user_id = excluded.sent_by_user_id,
    version = products.version + excluded.version, changed_at = excluded.changed_at`,
);

export const insertProductEvents = insertRows('product_events', ['event_id', 'account_id', 'product_id', 'user_id', ...eventRowColumns], onceByEventId);
