import { decodeCursorOf, encodeCursorOf } from '../../projections/reply-bytes.js';
import type { EventStore } from '../eventstore/port.js';

/**
 * The cursor of an export and of the feed: a checkpoint of the event store, opaque to clients (it
 * differs between PostgreSQL and EventStoreDB, and may change).
 */
const tag = 'e';

export const encodeExportCursor = (checkpoint: string): string => encodeCursorOf(tag, [checkpoint]);

/** The checkpoint of a cursor this service gave out for `store`; null for anything else. */
export function decodeExportCursor(store: Pick<EventStore, 'comparePositions'>, cursor: string): string | null {
  const parts = decodeCursorOf(tag, cursor, ['string']);
  const checkpoint = parts?.[0];
  if (typeof checkpoint !== 'string') return null;
  try {
    // Throws for a checkpoint that is not of this store.
    store.comparePositions(checkpoint, null);
    return checkpoint;
  } catch {
    return null;
  }
}
