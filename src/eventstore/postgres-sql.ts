/** SQL of the Postgres event store adapter. */

import type { NewEvent } from './port.js';

/** The append of a batch (see append_events in the migrations); `dedupe` skips ids already stored. */
export function appendEvents(events: NewEvent[], dedupe: boolean): { text: string; values: unknown[] } {
  const fn = dedupe ? 'append_events_dedupe' : 'append_events';
  return {
    text: `SELECT * FROM ${fn}($1::uuid[], $2::text[], $3::text[], $4::jsonb, $5::jsonb)`,
    values: [
      events.map((e) => e.id),
      events.map((e) => e.stream),
      events.map((e) => e.type),
      JSON.stringify(events.map((e) => e.data)),
      JSON.stringify(events.map((e) => e.metadata)),
    ],
  };
}

const recordedColumns = `global_position, stream_name, stream_position, event_id, event_type, data, metadata,
  recorded_at, transaction_id::text AS transaction_id`;

/**
 * Catch-up read. Rows are ordered by writing transaction, then position, and only rows of
 * transactions older than every transaction still running are returned: a transaction that
 * commits late can therefore never be passed over by a cursor that has moved on.
 */
export const readAllAfter = `SELECT ${recordedColumns} FROM events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
    AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ORDER BY transaction_id, global_position
  LIMIT $3`;

export const readStream = `SELECT ${recordedColumns} FROM events
  WHERE stream_name = $1 AND stream_position >= $2
  ORDER BY stream_position
  LIMIT $3`;

export const ping = 'SELECT 1';
