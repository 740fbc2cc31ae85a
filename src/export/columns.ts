import type { ExportedEvent, ExportKind } from './exported-event.js';

/**
 * The columns of one kind of event, for the formats of one kind a row (docs/export.md, CSV and
 * Parquet): the same columns, in the same order, for every export of that kind. Objects (a
 * profile, attributes, eventData, properties) are one column of JSON; instants are timestamps
 * where the format has them; a value the event does not have is empty (null).
 */
export type ColumnType = 'string' | 'json' | 'timestamp';

export interface Column {
  name: string;
  type: ColumnType;
  value: (event: ExportedEvent) => unknown;
}

const column = (name: string, type: ColumnType, value: Column['value']): Column => ({ name, type, value });

const eventId = column('event_id', 'string', (e) => e.eventId);
const trackId = column('track_id', 'string', (e) => e.trackID);
const eventType = column('event_type', 'string', (e) => e.eventType);
const receivedAt = column('received_at', 'timestamp', (e) => e.receivedAt);
const userId = column('user_id', 'string', (e) => e.data.userId);
const anonymousId = column('anonymous_id', 'string', (e) => e.data.anonymousId);
const productId = column('product_id', 'string', (e) => e.data.productId);
const eventName = column('event_name', 'string', (e) => e.data.eventName);
// As sent: its text, offset and all; event_time_utc is its instant.
const eventTime = column('event_time', 'string', (e) => e.data.eventTime);
const eventTimeUtc = column('event_time_utc', 'timestamp', (e) => e.data.eventTimeUtc);
const eventData = column('event_data', 'json', (e) => e.data.eventData);
const erasureId = column('erasure_id', 'string', (e) => e.erased?.erasureId);
const erasedAt = column('erased_at', 'timestamp', (e) => e.erased?.erasedAt);
const cursor = column('cursor', 'string', (e) => e.cursor);

export const columnsOf: Record<ExportKind, readonly Column[]> = {
  users: [eventId, trackId, eventType, receivedAt, userId, anonymousId, column('profile', 'json', (e) => e.data.profile), column('attributes', 'json', (e) => e.data.attributes), erasureId, erasedAt, cursor],
  events: [eventId, trackId, receivedAt, eventTime, eventTimeUtc, userId, anonymousId, eventName, eventData, erasureId, erasedAt, cursor],
  products: [eventId, trackId, receivedAt, productId, userId, column('properties', 'json', (e) => e.data.properties), erasureId, erasedAt, cursor],
  productsevents: [eventId, trackId, receivedAt, eventTime, eventTimeUtc, productId, userId, eventName, eventData, erasureId, erasedAt, cursor],
};
