/**
 * The one way projections write rows: $1 is a JSON array of objects keyed by column name, which
 * json_populate_recordset turns into rows of `table`'s types.
 */
export function insertRows(table: string, columns: readonly string[], onConflict: string): string {
  const list = columns.join(', ');
  return `INSERT INTO ${table} (${list})
  SELECT ${list} FROM json_populate_recordset(NULL::${table}, $1::json)
  ON CONFLICT ${onConflict}`;
}

/** Columns of the per-event tables user_events and product_events, after their id columns. */
export const eventRowColumns = ['event_name', 'event_time', 'event_time_utc', 'event_data', 'received_at', 'global_position'] as const;

/** Rows keyed by event id: written once, however often their event is read. */
export const onceByEventId = '(event_id) DO NOTHING';
