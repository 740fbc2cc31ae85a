import { writeFile } from 'node:fs/promises';
import type pg from 'pg';
import { v7 as uuidv7 } from 'uuid';

/**
 * The rows of the raw write ceiling (ceilings.ts): rows the service stored, read back from its
 * `events` table, written again with fresh event ids and stream names into a copy of that table in
 * a scratch schema, by multi-row INSERT or by COPY FROM a file the server reads.
 */

export type WriteMethod = 'INSERT' | 'COPY';

const scratchSchema = 'bench_ceiling';
export const scratchTable = `${scratchSchema}.events`;

const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
const sqlLiteral = (text: string): string => `'${text.replaceAll("'", "''")}'`;
// COPY's text format: backslash escapes, tab between columns, newline between rows.
const copyField = (text: string): string => text.replaceAll('\\', '\\\\').replaceAll('\t', '\\t').replaceAll('\n', '\\n').replaceAll('\r', '\\r');

export interface Template {
  /** Columns a writer gives (no identity, default or generated column): the store's own insert list. */
  columns: string[];
  /** The cells of each row as text (null: SQL NULL). */
  rows: (string | null)[][];
  streamColumn: number;
  idColumn: number;
}

/** The columns of `events` a writer gives: no identity, default or generated ones. */
export async function writableColumns(db: pg.ClientBase): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>(
    `SELECT attname AS name FROM pg_attribute
     WHERE attrelid = 'events'::regclass AND attnum > 0 AND NOT attisdropped AND attidentity = '' AND attgenerated = '' AND NOT atthasdef
     ORDER BY attnum`,
  );
  return rows.map((r) => r.name);
}

/** The global position of the last stored event; null for an empty store. */
export async function lastPosition(db: pg.ClientBase): Promise<string | null> {
  return (await db.query<{ p: string | null }>('SELECT max(global_position)::text AS p FROM events')).rows[0]?.p ?? null;
}

/**
 * The events stored after `position` (null: all), as templates; with `trackIds`, only those of
 * these items (the trackIDs of a reply): others may have been committed meanwhile.
 */
export async function storedRowsAfter(db: pg.ClientBase, columns: string[], position: string | null, trackIds: string[] | null = null): Promise<Template> {
  const { rows } = await db.query<{ cells: (string | null)[] }>({
    text: `SELECT ARRAY[${columns.map((c) => `${quoteIdent(c)}::text`).join(', ')}] AS cells FROM events
           WHERE global_position > coalesce($1::bigint, 0) AND ($2::text[] IS NULL OR metadata->>'trackId' = ANY($2))
           ORDER BY global_position`,
    values: [position, trackIds],
  });
  const streamColumn = columns.indexOf('stream_name');
  const idColumn = columns.indexOf('event_id');
  if (streamColumn < 0 || idColumn < 0) throw new Error(`ceilings: the events table has no stream_name or event_id column to vary (columns: ${columns.join(', ')})`);
  if (rows.length === 0) throw new Error('ceilings: no stored rows to repeat');
  return { columns, rows: rows.map((r) => r.cells), streamColumn, idColumn };
}

/** A fresh, empty copy of `events` with everything it is made of: columns, defaults, identity, generated columns, indexes. */
export async function createScratchTable(db: pg.ClientBase): Promise<void> {
  await db.query(`CREATE SCHEMA IF NOT EXISTS ${scratchSchema}`);
  await db.query(`DROP TABLE IF EXISTS ${scratchTable}`);
  await db.query(`CREATE TABLE ${scratchTable} (LIKE events INCLUDING ALL)`);
}

export async function dropScratch(db: pg.ClientBase): Promise<void> {
  await db.query(`DROP SCHEMA IF EXISTS ${scratchSchema} CASCADE`);
}

type RowWriter = (id: string, suffix: string) => string;

/**
 * The statement text of each template row, split where its id goes (every occurrence: the
 * metadata's trackId names it too) and where the suffix of its stream name goes.
 */
function rowWriters(template: Template, method: WriteMethod): RowWriter[] {
  const [cell, nullCell, separator, wrap] =
    method === 'INSERT'
      ? [sqlLiteral, 'NULL', ', ', (row: string) => `(${row})`]
      : [copyField, '\\N', '\t', (row: string) => `${row}\n`];
  const mark = '\u0001';
  return template.rows.map((cells) => {
    const templateId = cells[template.idColumn] ?? '';
    const text = wrap(cells.map((value, i) => (value === null ? nullCell : cell(i === template.streamColumn ? `${value}.${mark}` : value))).join(separator));
    const parts = text.split(templateId).map((part) => part.split(mark));
    return (id, suffix) => parts.map((pieces) => pieces.join(suffix)).join(id);
  });
}

/** Rows of the templates in turn, each with a fresh UUIDv7 event id and its stream name suffixed `.c<n>`. */
export class CeilingRows {
  private readonly writers: RowWriter[];
  private serial = 0;

  constructor(
    readonly method: WriteMethod,
    readonly template: Template,
  ) {
    this.writers = rowWriters(template, method);
  }

  /** The text of `count` rows: the VALUES list of an INSERT, or the lines of a COPY file. */
  next(count: number): string {
    const rows: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const writer = this.writers[this.serial % this.writers.length] as RowWriter;
      this.serial += 1;
      rows.push(writer(uuidv7(), `c${this.serial}`));
    }
    return this.method === 'INSERT' ? rows.join(', ') : rows.join('');
  }

  /** Stores rows made by next() in one statement; COPY through `file`, which the server must be able to read. */
  async write(client: pg.ClientBase, rows: string, file: string): Promise<void> {
    const target = `${scratchTable} (${this.template.columns.map(quoteIdent).join(', ')})`;
    if (this.method === 'INSERT') {
      await client.query(`INSERT INTO ${target} VALUES ${rows}`);
      return;
    }
    await writeFile(file, rows, { mode: 0o644 });
    await client.query(`COPY ${target} FROM ${sqlLiteral(file)}`);
  }
}
