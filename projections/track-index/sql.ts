/** SQL of the track index: its projection's insert and its read query. */

import { insertRows, onceByEventId } from '../rows-sql.js';

/** $1 a JSON array of track_index rows. */
export const insertTrackIndex = insertRows(
  'track_index',
  [
    'event_id',
    'track_id',
    'account_id',
    'event_type',
    'stream_name',
    'stream_position',
    'global_position',
    'recorded_at',
    'item_name',
    'user_id',
    'anonymous_id',
    'user_ref',
    'anonymous_ref',
    'product_id',
    'preview',
  ],
  onceByEventId,
);

/**
 * $1 a JSON array of track_index rows: those stored at another place than the row their event id
 * already has are later copies of it, recorded once each. Run after insertTrackIndex on the same
 * rows, so that a copy's first is found also when both came in one batch.
 */
export const insertRepeats = `INSERT INTO track_index_repeats (event_id, stream_name, stream_position, global_position, recorded_at)
  SELECT r.event_id, r.stream_name, r.stream_position, r.global_position, r.recorded_at
  FROM json_populate_recordset(NULL::track_index, $1::json) AS r
  JOIN track_index t ON t.event_id = r.event_id
  WHERE (t.stream_name, t.stream_position) <> (r.stream_name, r.stream_position)
  ON CONFLICT DO NOTHING`;

/** Of the event ids $1, those stored more than once: where the first copy is and where each later one, by global position. */
export const repeatsOf = `SELECT r.event_id,
    t.stream_name AS first_stream, t.stream_position AS first_stream_position, t.global_position AS first_global_position, t.recorded_at AS first_recorded_at,
    r.stream_name, r.stream_position, r.global_position, r.recorded_at
  FROM track_index_repeats r JOIN track_index t ON t.event_id = r.event_id
  WHERE r.event_id = ANY ($1::uuid[])
  ORDER BY r.global_position`;

/**
 * Where the track index says the events of a trackID are stored, oldest first: the event whose id
 * is the trackID by the primary key, the others by track_index_by_track_other (which holds only
 * rows whose id is not their trackID).
 */
export const trackedEvents = `SELECT event_id, stream_name, stream_position, global_position FROM (
    SELECT * FROM track_index WHERE event_id = $1 AND track_id = $1
    UNION ALL
    SELECT * FROM track_index WHERE track_id = $1 AND track_id <> event_id
  ) t
  WHERE $2::uuid IS NULL OR account_id = $2
  ORDER BY global_position`;

/**
 * The latest indexed events of account $1, latest first: $2 how many, $3 only those indexed after
 * this indexed_order (null: any), $4 only these event types (null: any), $5 only those indexed
 * before this indexed_order (null: any), $6 only events of this name (null: any), $7 only items of
 * this person, userId or else anonymousId (null: anyone). Walks an index of the account's rows
 * (track_index_by_account, or by name or person when filtered) from the latest row (or $5) down,
 * stopping at $3 or after $2 rows. The filters' `IS NULL` tests fold away when the statement is
 * planned with its values, so the filtered indexes serve them.
 */
export const latestOfAccount = `SELECT track_id, event_type, stream_name, global_position, recorded_at, indexed_order,
    item_name, user_id, anonymous_id, product_id, preview
  FROM track_index
  WHERE account_id = $1 AND ($3::bigint IS NULL OR indexed_order > $3) AND ($4::text[] IS NULL OR event_type = ANY ($4))
    AND ($5::bigint IS NULL OR indexed_order < $5)
    AND ($6::text IS NULL OR item_name = $6)
    AND ($7::text IS NULL OR coalesce(user_id, anonymous_id) = $7)
  ORDER BY indexed_order DESC
  LIMIT $2`;

/** Where the event $1 of account $2 is stored (its first copy). */
export const eventOfAccount = `SELECT stream_name, stream_position, global_position FROM track_index WHERE event_id = $1 AND account_id = $2`;
