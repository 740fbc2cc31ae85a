import { eventTypes, type RecordedEvent } from '../../src/eventstore/port.js';
import type { Db, Projection } from '../runner/projection.js';
import { writeRows } from '../rows-sql.js';
import { liveDetailsOf } from './details.js';
import { insertRepeats, insertTrackIndex } from './sql.js';

/**
 * trackID to its stored event(s): where auditors start, and the Live events list (with each item's
 * name, person, product and the start of its payload: details.ts). An event id stored twice (EventStoreDB may,
 * docs/eventstoredb.md) keeps its first copy as its one row; the later copies are recorded apart,
 * as repeats of it, not as items of their own.
 */
export const trackIndexProjection: Projection = {
  name: 'track-index',
  eventTypes,
  tables: ['track_index', 'track_index_repeats'],
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
      ...liveDetailsOf(event),
    }));
    const indexed = await writeRows(db, insertTrackIndex, rows);
    // A row not written is an id indexed before (or twice in this batch): look for later copies
    // only then, so that the usual batch costs one statement.
    if (indexed < rows.length) await writeRows(db, insertRepeats, rows);
  },
};
