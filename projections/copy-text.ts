/**
 * Rows as the text format of COPY: one line per row, columns separated by tabs, `\N` for null.
 * Each value is the text PostgreSQL's input function of the column reads, the same text
 * json_populate_recordset gave it for the JSON value: strings as they are, numbers and booleans as
 * JSON writes them, objects as JSON; for a jsonb column every value as JSON; for a text[] column
 * an array literal.
 */

/** How a column's values are written. */
export type ColumnKind = 'scalar' | 'jsonb' | 'text[]';

export interface CopyColumn {
  name: string;
  kind: ColumnKind;
}

/** COPY's escapes of the text of one value: backslash, and the tab, newline and carriage return that end fields and lines. */
const escapes: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const needsEscape = /[\\\t\n\r]/;
const escapable = /[\\\t\n\r]/g;

function escaped(text: string): string {
  return needsEscape.test(text) ? text.replace(escapable, (c) => escapes[c] as string) : text;
}

/**
 * A string with a lone surrogate has no UTF-8 form: the JSON of a statement carried it as an escape
 * PostgreSQL refuses; the bytes of a COPY would turn it into U+FFFD. The row is refused instead,
 * as an error of the event (it is parked).
 */
function wellFormed(text: string): string {
  if (!text.isWellFormed()) throw new Error('a value holds a lone UTF-16 surrogate, which PostgreSQL cannot store');
  return text;
}

function scalarText(value: unknown): string {
  if (typeof value === 'string') return wellFormed(value);
  return wellFormed(JSON.stringify(value));
}

/** An element of a text[] literal: always quoted, with `"` and `\` escaped. */
function arrayElement(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  const text = scalarText(value);
  return `"${/["\\]/.test(text) ? text.replace(/["\\]/g, '\\$&') : text}"`;
}

function valueText(value: unknown, kind: ColumnKind): string {
  if (value === null || value === undefined) return '\\N';
  if (kind === 'jsonb') return escaped(wellFormed(JSON.stringify(value)));
  if (kind === 'text[]' && Array.isArray(value)) return escaped(`{${value.map(arrayElement).join(',')}}`);
  return escaped(scalarText(value));
}

/** The COPY text line of a row (with its newline); a column the row lacks is null. */
export function copyLine(row: object, columns: readonly CopyColumn[]): string {
  const values = row as Readonly<Record<string, unknown>>;
  let line = '';
  for (let i = 0; i < columns.length; i += 1) {
    const column = columns[i] as CopyColumn;
    line += (i === 0 ? '' : '\t') + valueText(values[column.name], column.kind);
  }
  return `${line}\n`;
}
