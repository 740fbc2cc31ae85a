/** SQL of the track index: its projection's insert and its read query. */

import { insertRows, onceByEventId } from '../rows-sql.js';

/** $1 a JSON array of track_index rows. */
export const insertTrackIndex = insertRows(
  'track_index',
  ['event_id', 'track_id', 'account_id', 'event_type', 'stream_name', 'stream_position', 'global_position', 'recorded_at'],
  onceByEventId,
);

/** Where the track index says the events of a trackID are stored, oldest first. */
export const trackedEvents = `SELECT event_id, stream_name, stream_position, global_position FROM track_index
  WHERE track_id = $1 AND ($2::uuid IS NULL OR account_id = $2)
  ORDER BY global_position`;

/**
 * The latest indexed events of account $1, latest first: $2 how many, $3 only those indexed after
 * this indexed_order (null: any), $4 only these event types (null: any). Walks the index
 * track_index_by_account from the latest row down, stopping at $3 or after $2 rows.
 */
export const latestOfAccount = `SELECT track_id, event_type, stream_name, global_position, recorded_at, indexed_order FROM track_index
  WHERE account_id = $1 AND ($3::bigint IS NULL OR indexed_order > $3) AND ($4::text[] IS NULL OR event_type = ANY ($4))
  ORDER BY indexed_order DESC
  LIMIT $2`;
