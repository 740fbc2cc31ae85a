import { eventTypes, type RecordedEvent } from '../../src/eventstore/port.js';
import type { Db, Projection } from '../runner/projection.js';
import { insertRows, onceByEventId, writeRows } from '../rows-sql.js';

const insertTrackIndex = insertRows(
  'track_index',
  ['event_id', 'track_id', 'account_id', 'event_type', 'stream_name', 'stream_position', 'global_position', 'recorded_at'],
  onceByEventId,
);

/** trackID to its stored event(s): where auditors start. */
export const trackIndexProjection: Projection = {
  name: 'track-index',
  lockKey: 4,
  eventTypes,
  tables: ['track_index'],
  readsData: false,
  keyedByEventId: true,

  async apply(db: Db, events: RecordedEvent[]): Promise<void> {
    const rows = events.map((event) => ({
      event_id: event.id,
      track_id: event.metadata.trackId,
      account_id: event.metadata.accountId,
      event_type: event.type,
      stream_name: event.stream,
      stream_position: event.streamPosition,
      global_position: event.globalPosition,
      recorded_at: event.recordedAt,
    }));
    await writeRows(db, insertTrackIndex, rows);
  },
};
