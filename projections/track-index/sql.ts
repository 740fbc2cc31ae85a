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
