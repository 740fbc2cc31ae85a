import { stringify } from 'csv-stringify/sync';
import type { ExportedEvent, ExportKind } from './exported-event.js';

/**
 * The CSV of one kind of event (docs/export.md, CSV): the same columns, in the same order, for
 * every export of that kind. Objects (a profile, attributes, eventData, properties) are one column
 * of JSON text; a value the event does not have is an empty cell.
 */
type Column = readonly [name: string, value: (event: ExportedEvent) => unknown];

const common = {
  eventId: ['event_id', (e) => e.eventId],
  trackId: ['track_id', (e) => e.trackID],
  eventType: ['event_type', (e) => e.eventType],
  receivedAt: ['received_at', (e) => e.receivedAt],
  userId: ['user_id', (e) => e.data.userId],
  anonymousId: ['anonymous_id', (e) => e.data.anonymousId],
  productId: ['product_id', (e) => e.data.productId],
  eventName: ['event_name', (e) => e.data.eventName],
  eventTime: ['event_time', (e) => e.data.eventTime],
  eventTimeUtc: ['event_time_utc', (e) => e.data.eventTimeUtc],
  eventData: ['event_data', (e) => e.data.eventData],
  erasureId: ['erasure_id', (e) => e.erased?.erasureId],
  erasedAt: ['erased_at', (e) => e.erased?.erasedAt],
  cursor: ['cursor', (e) => e.cursor],
} satisfies Record<string, Column>;

const { eventId, trackId, eventType, receivedAt, userId, anonymousId, productId, eventName, eventTime, eventTimeUtc, eventData, erasureId, erasedAt, cursor } = common;

export const csvColumns: Record<ExportKind, readonly Column[]> = {
  users: [eventId, trackId, eventType, receivedAt, userId, anonymousId, ['profile', (e) => e.data.profile], ['attributes', (e) => e.data.attributes], erasureId, erasedAt, cursor],
  events: [eventId, trackId, receivedAt, eventTime, eventTimeUtc, userId, anonymousId, eventName, eventData, erasureId, erasedAt, cursor],
  products: [eventId, trackId, receivedAt, productId, userId, ['properties', (e) => e.data.properties], erasureId, erasedAt, cursor],
  productsevents: [eventId, trackId, receivedAt, eventTime, eventTimeUtc, productId, userId, eventName, eventData, erasureId, erasedAt, cursor],
};

const cell = (value: unknown): string | number | boolean | null => {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
};

export const csvHeader = (kind: ExportKind): string => stringify([csvColumns[kind].map(([name]) => name)]);

export const csvRows = (kind: ExportKind, events: readonly ExportedEvent[]): string =>
  events.length === 0 ? '' : stringify(events.map((event) => csvColumns[kind].map(([, value]) => cell(value(event)))));
