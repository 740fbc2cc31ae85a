import { eventTypes } from '../eventstore/events.js';
import { exportKinds } from '../export/exported-event.js';
import { exportFormats } from '../export/write.js';
import { takingAdminToken } from './admin-operations.js';
import { limitParameter, responseRef } from './components.js';
import { closedObject, orNull, schemaRef, withOptional, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/** The export and the feed of an account's events (docs/export.md), under /admin/v1/accounts/:license. */

const accounts = '/admin/v1/accounts/:license';
const query = (name: string, description: string, schema: JsonObject = { type: 'string' }): JsonObject => ({ name, in: 'query', required: false, description, schema });
const tooMany: JsonObject = {
  description: 'Too many exports, or long polls, of the account at once: retry after the seconds of `Retry-After`.',
  headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } },
  content: { 'application/json': { schema: schemaRef('ErrorReply') } },
};
const cursorText = { type: 'string', description: 'Give it back as `after` to continue past this event.' };

export const exportSchemas: Record<string, JsonObject> = {
  ExportedEvent: withOptional(
    closedObject({
      cursor: cursorText,
      eventId: { type: 'string', format: 'uuid' },
      trackID: { type: 'string', format: 'uuid', description: 'The trackID the item was answered with.' },
      kind: { enum: [...exportKinds], description: 'The ingest endpoint the event came from; merges are `users`.' },
      eventType: { enum: [...eventTypes] },
      receivedAt: { type: 'string', format: 'date-time' },
      data: { type: 'object', description: "The event's data as docs/events.md shows it, opened. An erased event's holds no value of the person: no ids, empty fields." },
      erased: {
        oneOf: [{ type: 'null' }, closedObject({ erasureId: orNull('string', { format: 'uuid' }), erasedAt: orNull('string', { format: 'date-time' }) })],
        description: 'Which erasure took the person, and when; null for a readable event.',
      },
    }),
    { source: { type: 'object', description: 'Where a Segment message came from: `{ api, messageId, library }`.' } },
  ),
  FeedPage: closedObject({
    events: { type: 'array', items: schemaRef('ExportedEvent'), description: "In the store's order; at most `limit`, and at most about 1 MiB of event data past the first." },
    next: orNull('string', { description: 'Give it back as `after` for the events past these (null only before the account has any event).' }),
    atEnd: { type: 'boolean', description: 'Every event readable now was given: ask again, with a `wait`, for those to come.' },
  }),
};

const afterParameter = query('after', 'A `cursor` of an exported event, a `next` of the feed or an `Export-Cursor` trailer: only the events past it.');

export const exportOperations: OperationDoc[] = takingAdminToken([
  {
    method: 'get',
    path: `${accounts}/export`,
    operationId: 'export-events',
    tag: 'Export',
    summary: "The account's events, streamed",
    description:
      "Every stored event of the account that the filters select, opened, in the store's order, up to those stored when the export reaches the end; streamed at constant memory whatever its size. " +
      'Each event carries its `cursor`: an export cut off continues with `after` set to the last cursor it holds, with no gap and no duplicate. ' +
      'A reply that ends without its last chunk was cut off (the service stopped, or failed to read, or the client read nothing for 60 s): continue it the same way. The `Export-Cursor` trailer (HTTP/1.1) is past every event read, also those the filters left out. ' +
      'The export ends at the events stored when it began; at most 2 exports of an account run at once (429 past them).',
    access: 'account',
    usesStore: true,
    parameters: [
      query('format', '`ndjson` (default): a JSON object a line. `csv`, `parquet`: the columns of one `kind`; a Parquet file is readable only whole (one cut off is asked for again).', { enum: [...exportFormats] }),
      query('kind', 'Only events of this ingest endpoint; required with `format=csv` and `format=parquet`.', { enum: [...exportKinds] }),
      query('name', 'Only events and product events of this exact eventName.'),
      query('user', 'Only the events of this person, as Live events filters: their exact userId, or for an event without a userId, its exact anonymousId.'),
      query('time', 'What `from` and `to` bound: `received` (default), when the service received the event, or `event`, its own time (events and product events; the others: when received).', { enum: ['received', 'event'] }),
      query('from', 'Only events at or after this ISO 8601 date or date-time.', { type: 'string' }),
      query('to', 'Only events before this ISO 8601 date or date-time.', { type: 'string' }),
      afterParameter,
      query('header', 'CSV: `false` leaves out the line of column names (a continuation appended to a file).', { enum: ['true', 'false'] }),
    ],
    responses: {
      200: {
        description: 'The events, as NDJSON, CSV or Parquet.',
        headers: {
          'Content-Disposition': { description: 'attachment; filename="events.ndjson" (or "events-<kind>.csv", "events-<kind>.parquet")', schema: { type: 'string' } },
          Trailer: { description: '`Export-Cursor`: sent after the last event, where a later export continues.', schema: { type: 'string' } },
        },
        content: {
          'application/x-ndjson': { schema: { type: 'string' } },
          'text/csv': { schema: { type: 'string' } },
          'application/vnd.apache.parquet': { schema: { type: 'string', format: 'binary' } },
        },
      },
      400: responseRef('BadRequest'),
      429: tooMany,
    },
  },
  {
    method: 'get',
    path: `${accounts}/feed`,
    operationId: 'read-event-feed',
    tag: 'Export',
    summary: "The account's events, a page at a time",
    description:
      "The events past `after`, in the store's order, which never skips an event committed late by another process: a loader that stores `next` with the rows it wrote, in one transaction, gets every event once. " +
      '(On EventStoreDB an event may be stored twice under the same `eventId`, and is then given twice: key the rows by `eventId`.) ' +
      'With `wait`, a reply with no events comes only after that many seconds, or sooner as soon as there are some (a long poll); at most 8 long polls of an account run at once (429 past them).',
    access: 'account',
    usesStore: true,
    parameters: [afterParameter, limitParameter(1000, 100), query('wait', 'Seconds to wait for events when there are none yet, 0 to 20 (0).', { type: 'integer', minimum: 0, maximum: 20 })],
    responses: { 200: jsonReply('A page of events and the cursor of the next.', schemaRef('FeedPage')), 400: responseRef('BadRequest'), 429: tooMany },
  },
]);
