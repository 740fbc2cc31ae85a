/** SQL of the leads projection. Rows travel as JSON keyed by column name, in both directions. */

import { systemAttributes } from '../../src/spec/system-attributes.js';
import { insertRows } from '../rows-sql.js';

/** Every column of `leads`, in table order (json_populate_recordset fills them by name). */
const leadColumns = [
  'account_id', 'profile_kind', 'profile_id',
  ...systemAttributes.map((a) => a.column),
  'attributes', 'attribute_types', 'own_keys', 'anonymous_ids', 'merged_into', 'search_text', 'version', 'created_position',
  'created_at', 'changed_at',
];

const keyColumns = new Set(['account_id', 'profile_kind', 'profile_id']);

/** $1 account ids, $2 anonymous ids (parallel arrays). */
export const selectMerges = `SELECT m.account_id, m.anonymous_id, m.user_id
  FROM lead_merges m JOIN unnest($1::uuid[], $2::text[]) AS k(account_id, anonymous_id)
    ON m.account_id = k.account_id AND m.anonymous_id = k.anonymous_id`;

/** $1 account ids, $2 kinds, $3 profile ids (parallel arrays). */
export const selectLeads = `SELECT to_jsonb(l) AS row
  FROM leads l JOIN unnest($1::uuid[], $2::text[], $3::text[]) AS k(account_id, profile_kind, profile_id)
    ON l.account_id = k.account_id AND l.profile_kind = k.profile_kind AND l.profile_id = k.profile_id`;

/** $1 a JSON array of whole rows. */
export const upsertLeads = insertRows(
  'leads',
  leadColumns,
  `(account_id, profile_kind, profile_id) DO UPDATE SET
  ${leadColumns.filter((c) => !keyColumns.has(c)).map((c) => `${c} = excluded.${c}`).join(', ')}`,
);

/** $1 a JSON array of {account_id, anonymous_id, user_id}. */
export const insertMerges = insertRows('lead_merges', ['account_id', 'anonymous_id', 'user_id'], 'DO NOTHING');
