/** SQL of the read queries on the leads model (queries.ts). */

import { attributesUnderSpecNames, systemAttributes } from '../../src/spec/system-attributes.js';

/** Columns read out as ISO UTC times with six fraction digits. */
const timeColumns = [...systemAttributes.filter((a) => a.type === 'TIMESTAMPTZ').map((a) => a.column), 'created_at', 'changed_at'];
/** System attributes of spec 2.2 other than the ids and names, under their spec names. */
export const leadSystemAttributes: readonly string[] = attributesUnderSpecNames.map((a) => a.column);
const otherColumns = [
  'profile_kind', 'profile_id', 'user_id', 'anonymous_id', 'first_name', 'last_name', 'attributes', 'attribute_types',
  'anonymous_ids', 'merged_into', 'version', 'created_position', 'created_at', 'changed_at',
];
const selectList = [...new Set([...otherColumns, ...leadSystemAttributes])]
  .map((c) => (timeColumns.includes(c) ? `iso_utc(l.${c}) AS ${c}` : `l.${c}`))
  .join(', ');

/**
 * Newest first, in the order profiles were created; merged anonymous profiles are left out (their
 * known profile lists their ids in anonymousIds, and `q` finds it by them).
 */
export const listLeads = `SELECT ${selectList} FROM leads l
  WHERE l.account_id = $1 AND l.merged_into IS NULL
    AND ($2::text IS NULL OR l.search_text LIKE $2)
    AND ($3::bigint IS NULL OR (l.created_position, l.profile_kind, l.profile_id) < ($3, $4, $5))
  ORDER BY l.created_position DESC, l.profile_kind DESC, l.profile_id DESC
  LIMIT $6`;

/**
 * The known user with this id; else the known user an anonymous profile of this id was merged
 * into; else the anonymous profile.
 */
export const oneLead = `SELECT ${selectList} FROM leads l
  WHERE l.account_id = $1 AND (
    (l.profile_kind = 'user' AND l.profile_id = $2)
    OR (l.profile_kind = 'anonymous' AND l.profile_id = $2)
    OR (l.profile_kind = 'user' AND l.profile_id = (SELECT m.user_id FROM lead_merges m WHERE m.account_id = $1 AND m.anonymous_id = $2)))
  ORDER BY CASE WHEN l.profile_kind = 'user' AND l.profile_id = $2 THEN 0 WHEN l.profile_kind = 'user' THEN 1 ELSE 2 END
  LIMIT 1`;

/** Events of a profile and of the anonymous profiles merged into it, latest first. */
export const leadEvents = `SELECT event_id, user_id, anonymous_id, event_name, event_time, iso_utc(event_time_utc) AS event_time_utc,
    event_data, iso_utc(received_at) AS received_at
  FROM user_events
  WHERE account_id = $1 AND (user_id = $2 OR anonymous_id = ANY($3::text[]))
  ORDER BY event_time_utc DESC, global_position DESC
  LIMIT $4`;
