import type { EventOf } from '../src/eventstore/events.js';
import { defaultPageBytes, type RecordedEvent } from '../src/eventstore/port.js';
import { copyFromStdin } from './copy-in.js';
import { copyLine, type ColumnKind, type CopyColumn } from './copy-text.js';
import type { Db } from './runner/projection.js';

/**
 * The one way projections write rows: COPY into a staging table of the session (a temporary table
 * of the written columns), then one INSERT from it. COPY's text is the cheapest way PostgreSQL
 * reads rows (a third of the time json_populate_recordset took for the same leads rows), and every
 * statement keeps one shape whatever the number of rows.
 */
export interface RowsInsert {
  readonly table: string;
  readonly columns: readonly CopyColumn[];
  /** Makes the staging table on the session's first write (it lives as long as the connection). */
  readonly createStaging: string;
  readonly copy: string;
  /** Writes the staged rows, emptying the staging table; answers the rows staged and written. */
  readonly insert: string;
}

/**
 * A write of rows of `table` keyed by column name, through its staging table: `statement` gets the
 * staged rows as `staged` (a CTE that empties the staging table as it reads it, so that several
 * writes in one transaction, a batch applied in parts, never see each other's rows); it writes rows
 * (an INSERT) and has no RETURNING clause of its own. `kinds` names the columns that are not scalars (jsonb, text[]).
 * Every write of a table stages the same columns.
 */
export function stagedWrite(table: string, columns: readonly string[], kinds: Readonly<Record<string, ColumnKind>>, statement: string): RowsInsert {
  const list = columns.join(', ');
  const staging = `pg_temp.staged_${table}`;
  return {
    table,
    columns: columns.map((name) => ({ name, kind: kinds[name] ?? 'scalar' })),
    // Emptied at each commit too; the session keeps it as long as the connection lives.
    createStaging: `CREATE TEMPORARY TABLE IF NOT EXISTS ${staging} ON COMMIT DELETE ROWS AS SELECT ${list} FROM ${table} WITH NO DATA`,
    copy: `COPY ${staging} (${list}) FROM STDIN`,
    insert: `WITH staged AS (DELETE FROM ${staging} RETURNING ${list}),
  written AS (${statement} RETURNING 1)
  SELECT (SELECT count(*) FROM staged)::int AS staged, (SELECT count(*) FROM written)::int AS written`,
  };
}

/** The insert of rows of `table`: `columns` are written, the others get their defaults. */
export function insertRows(table: string, columns: readonly string[], onConflict: string, kinds: Readonly<Record<string, ColumnKind>> = {}): RowsInsert {
  const list = columns.join(', ');
  return stagedWrite(table, columns, kinds, `INSERT INTO ${table} (${list}) SELECT ${list} FROM staged\n  ON CONFLICT ${onConflict}`);
}

/** Columns of the per-event tables user_events and product_events, after their id columns. */
export const eventRowColumns = ['event_name', 'event_time', 'event_time_utc', 'event_data', 'received_at', 'global_position'] as const;
export const eventRowKinds: Readonly<Record<string, ColumnKind>> = { event_data: 'jsonb' };

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
 * Writes `rows` (objects keyed by column name) with `target`, in one INSERT after as many COPYs as
 * it takes to keep each one's text under `maxChars` (besides a first row larger than that), by
 * default a page's worth of event data (defaultPageBytes, counting characters): one string for a
 * whole batch of large events could pass what the heap, or a JavaScript string, can hold. Rows
 * must not depend on each other (each is an upsert of its own key, at most once per call). Resolves
 * to the rows inserted or updated. Inside a transaction only (as `apply` runs): the staging table
 * is emptied at each commit, so a COPY committed on its own would leave nothing to write.
 */
export async function writeRows(db: Db, target: RowsInsert, rows: readonly object[], maxChars = defaultPageBytes): Promise<number> {
  if (rows.length === 0) return 0;
  await db.query(target.createStaging);
  let text = '';
  for (const row of rows) {
    const line = copyLine(row, target.columns);
    if (text.length > 0 && text.length + line.length > maxChars) {
      await copyFromStdin(db, target.copy, text);
      text = '';
    }
    text += line;
  }
  await copyFromStdin(db, target.copy, text);
  const { rows: counts } = await db.query<{ staged: number; written: number }>(target.insert);
  const { staged, written } = counts[0] ?? { staged: 0, written: 0 };
  if (staged !== rows.length) throw new Error(`writeRows staged ${staged} of ${rows.length} rows of ${target.table}: it runs inside a transaction`);
  return written;
}
