/** SQL of the Postgres event store adapter. */

import type { NewEvent } from './port.js';

/**
 * The append of a batch (see append_events in the migrations); `dedupe` skips ids already stored.
 * `datas`: the JSON of each event's data, when made already (to measure the batch). `knownHeads`:
 * for each event, its stream's head when known to the caller (null: looked up); not with `dedupe`.
 */
export function appendEvents(
  events: NewEvent[],
  dedupe: boolean,
  datas: string[] = events.map((e) => JSON.stringify(e.data)),
  knownHeads?: (number | null)[],
): { text: string; values: unknown[] } {
  const values: unknown[] = [
    events.map((e) => e.id),
    events.map((e) => e.stream),
    events.map((e) => e.type),
    `[${datas.join(',')}]`,
    JSON.stringify(events.map((e) => e.metadata)),
  ];
  if (dedupe) return { text: 'SELECT * FROM append_events_dedupe($1::uuid[], $2::text[], $3::text[], $4::jsonb, $5::jsonb)', values };
  if (!knownHeads) return { text: 'SELECT * FROM append_events($1::uuid[], $2::text[], $3::text[], $4::jsonb, $5::jsonb)', values };
  return {
    text: 'SELECT * FROM append_events($1::uuid[], $2::text[], $3::text[], $4::jsonb, $5::jsonb, $6::bigint[])',
    values: [...values, knownHeads],
  };
}

const recordedColumns = `global_position, stream_name, stream_position, event_id, event_type, data, metadata,
  recorded_at, transaction_id::text AS transaction_id`;

/**
 * $4: the event types wanted, or NULL for all; the payload of other events is not sent. The text
 * alias of transaction_id must not be what ORDER BY names: text order puts '1000' before '999'.
 */
const filteredColumns = `global_position, stream_name, stream_position, event_id, event_type,
  ($4::text[] IS NULL OR event_type = ANY($4)) AS wanted,
  CASE WHEN ($4::text[] IS NULL OR event_type = ANY($4)) AND $5 THEN data END AS data,
  CASE WHEN $4::text[] IS NULL OR event_type = ANY($4) THEN metadata END AS metadata,
  recorded_at, transaction_id::text AS transaction_id`;

/** Bytes of data a row sends: none when its data is left out. */
const sentBytes = `CASE WHEN ($4::text[] IS NULL OR event_type = ANY($4)) AND $5 THEN data_bytes ELSE 0 END`;

/**
 * Catch-up read. Rows are ordered by writing transaction, then position, and only rows of
 * transactions older than every transaction still running are returned: a transaction that
 * commits late can therefore never be passed over by a cursor that has moved on.
 *
 * At most $3 rows, and only as long as the data of the rows before stays under $6 bytes (the first
 * row always comes). The sizes are stored with each event (data_bytes), so rows left out cost no
 * detoasting; the window runs along the index scan and stops with the LIMIT. With `byAccount`,
 * only the rows of account $7, along the index events_by_account: the same order, restricted.
 */
function catchUpRead(byAccount: boolean): string {
  return `SELECT * FROM (
    SELECT ${filteredColumns}, ${sentBytes} AS bytes,
      coalesce(sum(${sentBytes}) OVER (ORDER BY events.transaction_id, events.global_position
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS bytes_before
    FROM events
    WHERE ${byAccount ? 'account_id = $7 AND ' : ''}(transaction_id, global_position) > ($1::xid8, $2::bigint)
      AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY events.transaction_id, events.global_position
    LIMIT $3) page
  WHERE bytes_before < $6
  ORDER BY transaction_id::xid8, global_position`;
}

export const readAllAfter = catchUpRead(false);

export const readAccountAfter = catchUpRead(true);

/**
 * Events after a checkpoint, committed or about to be visible: what a reader there has still to
 * read ($4: of that account only, or NULL for all).
 */
export const backlogAfter = `SELECT count(*) AS events, min(recorded_at) AS oldest FROM events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
    AND ($3::text[] IS NULL OR event_type = ANY($3))
    AND ($4::text IS NULL OR account_id = $4)`;

/**
 * The account of each of up to $3 events after a checkpoint, in catch-up order (discovery). As
 * above, ORDER BY names the table's column, not the text alias.
 */
export const accountsAfter = `SELECT account_id, transaction_id::text AS transaction_id, global_position FROM events
  WHERE (transaction_id, global_position) > ($1::xid8, $2::bigint)
    AND ($4 OR transaction_id < pg_snapshot_xmin(pg_current_snapshot()))
  ORDER BY events.transaction_id, events.global_position
  LIMIT $3`;

export const readStream = `SELECT ${recordedColumns} FROM events
  WHERE stream_name = $1 AND stream_position >= $2
  ORDER BY stream_position
  LIMIT $3`;
