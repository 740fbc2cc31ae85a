/** SQL of the read queries on the leads model (queries.ts). */

import { attributesUnderSpecNames, systemAttributes } from '../../src/spec/system-attributes.js';
import { payloadColumns, payloadText } from '../reply-bytes.js';

/** Columns read out as ISO UTC times with six fraction digits. */
const timeColumns = [...systemAttributes.filter((a) => a.type === 'TIMESTAMPTZ').map((a) => a.column), 'created_at', 'changed_at'];
/** System attributes of docs/spec.md 2.2 other than the ids and names, under their names there. */
export const leadSystemAttributes: readonly string[] = attributesUnderSpecNames.map((a) => a.column);
const otherColumns = [
  'profile_kind', 'profile_id', 'user_id', 'anonymous_id', 'first_name', 'last_name', 'attributes', 'attribute_types',
  'anonymous_ids', 'merged_into', 'version', 'created_position', 'created_at', 'changed_at',
];
const leadColumns = [...new Set([...otherColumns, ...leadSystemAttributes])];
const selectList = leadColumns.map((c) => (timeColumns.includes(c) ? `iso_utc(l.${c}) AS ${c}` : `l.${c}`)).join(', ');
/** Columns of a lead that can grow large, as JSON: a list shows them only when small (payloadColumns). */
const listedPayloads: Record<string, string> = { attributes: 'l.attributes', attribute_types: 'l.attribute_types', anonymous_ids: 'to_jsonb(l.anonymous_ids)' };
const listSelectList = leadColumns
  .map((c) => (timeColumns.includes(c) ? `iso_utc(l.${c}) AS ${c}` : listedPayloads[c] ? payloadColumns(listedPayloads[c], c) : `l.${c}`))
  .join(', ');

/** What a page of the leads list asks for; each part present adds its condition and parameters. */
export interface ListShape {
  kind: boolean;
  cursor: boolean;
  /** `q`: a LIKE pattern over search_text. */
  pattern: boolean;
  /** A custom attribute's value: candidates of `lead_attributes_key` (leadAttributeCandidates). */
  attribute: boolean;
  /** How the page is found: in list order, over a budget of rows, or by the filters' indexes. */
  walk: 'list' | 'budgeted' | 'unordered';
}

const listOrder = 'created_position DESC, profile_kind DESC, profile_id DESC';

/** The conditions of the filters (kind, `q`, attribute) and of the cursor, with the parameters they take after $1 account, $2 rows. */
function conditionsOf(shape: Omit<ListShape, 'walk'>, firstParameter = 3): { where: string[]; matches: string[]; next: number } {
  let n = firstParameter;
  const next = (): string => `$${n++}`;
  const where = ['l.account_id = $1', 'l.merged_into IS NULL'];
  if (shape.kind) where.push(`l.profile_kind = ${next()}`);
  if (shape.cursor) {
    const [position, kind, id] = [next(), next(), next()];
    // The first condition lets the scan of leads_list_by_kind start at the cursor.
    where.push(`l.created_position <= ${position}`, `(l.created_position, l.profile_kind, l.profile_id) < (${position}, ${kind}, ${id})`);
  }
  const matches: string[] = [];
  if (shape.pattern) matches.push(`l.search_text LIKE ${next()}`);
  // Word for word the expression of the index leads_attributes (its migration).
  if (shape.attribute) matches.push(`lead_attributes_key(l.account_id, l.profile_kind, l.attributes) @> ANY(${next()}::jsonb[])`);
  return { where, matches, next: n };
}

/**
 * A page of the leads list, newest first in the order profiles were created; merged anonymous
 * profiles are left out (their known profile lists their ids in anonymousIds, and `q` finds it by
 * them). Parameters: $1 account, $2 rows, then `profile_kind` when `kind`, then the cursor's
 * position, kind and id when `cursor`, then the LIKE pattern when `pattern`, the attribute's
 * candidates when `attribute`, and (budgeted) the row budget.
 *
 * A filtered page (`q`, attribute) comes in two shapes, so that neither a rare nor a common value
 * reads the account's every lead: `budgeted` walks the list in order (index leads_list or
 * leads_list_by_kind) over at most a budget of rows and also returns the budget's last row
 * (`scanned` = the budget) when it was reached; `unordered` sorts what matches wherever it is, the
 * shape the filters' indexes serve (leads_search, leads_attributes), used when the budget ran out
 * short of a page: the value is rare.
 */
export function listLeadsSql(shape: ListShape): string {
  // The page's rows are found first, their large columns measured after: only the page's are.
  const extra = shape.walk === 'budgeted' ? ', l.matches, l.scanned' : '';
  return `SELECT ${listSelectList}${extra} FROM (${pageOfLeadsSql(shape)}) l ORDER BY ${listOrder.replace(/(\w+) DESC/g, 'l.$1 DESC')}`;
}

function pageOfLeadsSql(shape: ListShape): string {
  const { where, matches, next } = conditionsOf(shape);
  if (shape.walk === 'list') {
    return `SELECT l.* FROM leads l WHERE ${[...where, ...matches].join(' AND ')} ORDER BY ${listOrder.replace(/(\w+) DESC/g, 'l.$1 DESC')} LIMIT $2`;
  }
  if (shape.walk === 'unordered') {
    // `+ 0`: an order no index gives, so that the planner finds the matches first and sorts them.
    return `SELECT l.* FROM leads l WHERE ${[...where, ...matches].join(' AND ')}
      ORDER BY l.created_position + 0 DESC, l.profile_kind DESC, l.profile_id DESC LIMIT $2`;
  }
  const budget = `$${next}`;
  return `SELECT l.* FROM (
      SELECT l.*, ${matches.join(' AND ')} AS matches, row_number() OVER (ORDER BY ${listOrder}) AS scanned
      FROM (SELECT * FROM leads l WHERE ${where.join(' AND ')} ORDER BY ${listOrder} LIMIT ${budget}) l
    ) l
    WHERE l.matches OR l.scanned = ${budget}
    ORDER BY ${listOrder.replace(/(\w+) DESC/g, 'l.$1 DESC')} LIMIT $2 + 1`;
}

/**
 * The leads of the list's filters (no cursor), counted up to $2 (a LIMIT: the count stops there).
 * Parameters after $1 account and $2 as listLeadsSql's.
 */
export function countLeadsSql(shape: Omit<ListShape, 'walk' | 'cursor'>): string {
  const { where, matches } = conditionsOf({ ...shape, cursor: false });
  return `SELECT count(*)::int AS leads FROM (SELECT 1 FROM leads l WHERE ${[...where, ...matches].join(' AND ')} LIMIT $2) l`;
}

/** The plan of countLeadsSql without its LIMIT, as JSON: the planner's estimate of its rows. Parameters as countLeadsSql's less $2. */
export function estimateLeadsSql(shape: Omit<ListShape, 'walk' | 'cursor'>): string {
  const { where, matches } = conditionsOf({ ...shape, cursor: false }, 2);
  return `EXPLAIN (FORMAT JSON) SELECT 1 FROM leads l WHERE ${[...where, ...matches].join(' AND ')}`;
}

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

/**
 * Events of a profile and of the anonymous profiles merged into it, latest first, with their
 * trackID (null until the track index has the event): $4 of them at most, after the cursor
 * ($5 event_time_utc, $6 global_position; null: from the latest). Event data larger than a list
 * shows is left in PostgreSQL (payloadColumns), its size computed on the page's rows only.
 */
export const leadEvents = `SELECT e.event_id, e.user_id, e.anonymous_id, e.event_name, e.event_time, iso_utc(e.event_time_utc) AS event_time_utc,
    ${payloadColumns('e.event_data', 'event_data', 's.t')}, iso_utc(e.received_at) AS received_at, e.global_position, t.track_id
  FROM (
    SELECT * FROM user_events e
    WHERE e.account_id = $1 AND (e.user_id = $2 OR e.anonymous_id = ANY($3::text[]))
      AND ($5::timestamptz IS NULL OR (e.event_time_utc, e.global_position) < ($5::timestamptz, $6::bigint))
    ORDER BY e.event_time_utc DESC, e.global_position DESC
    LIMIT $4
  ) e
  ${payloadText('e.event_data', 's')}
  LEFT JOIN track_index t ON t.event_id = e.event_id
  ORDER BY e.event_time_utc DESC, e.global_position DESC`;

/**
 * A lead's timeline: the stored events of its streams ($2, the profile's own and those of the
 * anonymous profiles merged into it), latest first, from the track index, with the details of
 * tracked events from user_events. Each stream is read from its newest event before $4 (a global
 * position; null: from the newest), at most $3 of it, by the index track_index_timeline (its
 * predicate is this query's event types: keep them alike). Event data as in leadEvents.
 * `unnamed`: the index holds no id of the event's person, as for an erased person's event (every
 * readable event of these types names one): the store says whether it is erased, and by what.
 */
export const leadTimeline = `SELECT t.event_id, t.global_position, t.stream_name, t.stream_position, t.event_type, t.anonymous_id, t.track_id, iso_utc(t.recorded_at) AS at,
    (t.user_id IS NULL AND t.anonymous_id IS NULL) AS unnamed,
    e.event_name, e.event_time, iso_utc(e.event_time_utc) AS event_time_utc, ${payloadColumns('e.event_data', 'event_data', 's.t')}
  FROM (
    SELECT t.* FROM unnest($2::text[]) AS s(stream_name)
    CROSS JOIN LATERAL (
      SELECT * FROM track_index t
      WHERE t.stream_name = s.stream_name AND t.account_id = $1 AND t.event_type IN ('UserUpserted', 'ProfilesMerged', 'EventTracked')
        AND ($4::bigint IS NULL OR t.global_position < $4)
      ORDER BY t.global_position DESC LIMIT $3
    ) t
    ORDER BY t.global_position DESC
    LIMIT $3
  ) t
  LEFT JOIN user_events e ON e.event_id = t.event_id
  ${payloadText('e.event_data', 's')}
  ORDER BY t.global_position DESC`;

/**
 * The pseudonyms of the anonymous ids merged into user $2 (a pseudonym) of account $1, as the
 * identity map keeps them for good: their streams belong to the user's timeline also once an
 * anonymous id was erased, when no read model names it any more.
 */
export const mergedAnonymousRefs = 'SELECT anonymous_ref FROM identity_merges WHERE account_id = $1 AND user_ref = $2';
