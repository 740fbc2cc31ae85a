import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Db, Projection } from '../runner/projection.js';
import { eventRowOf, writeRows } from '../rows-sql.js';
import { insertUserEvents } from './sql.js';

/** User events: the timeline of each profile (the /events endpoint). */
export const userEventsProjection: Projection = {
  name: 'user-events',
  eventTypes: ['EventTracked'],
  tables: ['user_events'],
  keyedByEventId: true,

  async apply(db: Db, events: RecordedEvent[]): Promise<void> {
    // The runner passes only EventTracked events (eventTypes); narrowing on type gives their data.
    const rows = events.flatMap((event) => {
      // An erased person's events leave no row (docs/decisions.md, Erasure).
      if (event.type !== 'EventTracked' || event.erased) return [];
      const data = event.data;
      const row = {
        event_id: event.id,
        account_id: event.metadata.accountId,
        user_id: data.userId ?? null,
        anonymous_id: data.userId === undefined ? (data.anonymousId ?? null) : null,
        ...eventRowOf(event),
      };
      return [row];
    });
    await writeRows(db, insertUserEvents, rows);
  },
};
