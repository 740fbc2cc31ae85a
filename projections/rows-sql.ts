import type { EventOf } from '../src/eventstore/events.js';
import { defaultPageBytes, type RecordedEvent } from '../src/eventstore/port.js';
import type { Db } from './runner/projection.js';

/**
 * The one way projections write rows: $1 is a JSON array of objects keyed by column name, which
 * json_populate_recordset turns into rows of `table`'s types (sent with writeRows).
 */
export function insertRows(table: string, columns: readonly string[], onConflict: string): string {
  const list = columns.join(', ');
  return `INSERT INTO ${table} (${list})
  SELECT ${list} FROM json_populate_recordset(NULL::${table}, $1::json)
  ON CONFLICT ${onConflict}`;
}

/** Columns of the per-event tables user_events and product_events, after their id columns. */
export const eventRowColumns = ['event_name', 'event_time', 'event_time_utc', 'event_data', 'received_at', 'global_position'] as const;

/** The eventRowColumns of a tracked event (of a person or of a product). */
export function eventRowOf(event: RecordedEvent<EventOf<'EventTracked'> | EventOf<'ProductEventTracked'>>): Record<(typeof eventRowColumns)[number], unknown> {
  return {
    event_name: event.data.eventName,
    event_time: event.data.eventTime,
    event_time_utc: event.data.eventTimeUtc,
    event_data: event.data.eventData,
    received_at: event.metadata.receivedAt,
    global_position: event.globalPosition,
  };
}

/** Rows keyed by event id: written once, however often their event is read. */
export const onceByEventId = '(event_id) DO NOTHING';

/**
 * Runs `statement` (of insertRows) on `rows`, in as many statements as it takes to keep each JSON
 * text under `maxChars` (besides a first row larger than that), by default a page's worth of event
 * data (defaultPageBytes, counting characters): one string for a whole batch of large events could pass what the heap, or
 * a JavaScript string, can hold. Rows must not depend on each other within the call (each is an
 * upsert of its own key), so splitting them changes nothing. Resolves to the rows the statements
 * inserted or updated.
 */
export async function writeRows(db: Db, statement: string, rows: readonly object[], maxChars = defaultPageBytes): Promise<number> {
  let chunk: string[] = [];
  let chars = 0;
  let written = 0;
  const send = async (): Promise<void> => {
    if (chunk.length) written += (await db.query(statement, [`[${chunk.join(',')}]`])).rowCount ?? 0;
    chunk = [];
    chars = 0;
  };
  for (const row of rows) {
    const json = JSON.stringify(row);
    if (chars > 0 && chars + json.length > maxChars) await send();
    chunk.push(json);
    chars += json.length + 1;
  }
  await send();
  return written;
}
