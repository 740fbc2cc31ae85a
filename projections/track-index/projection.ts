import { eventTypes, type RecordedEvent } from '../../src/eventstore/port.js';
import type { Db, Projection } from '../runner/projection.js';
import { writeRows } from '../rows-sql.js';
import { insertTrackIndex } from './sql.js';

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
