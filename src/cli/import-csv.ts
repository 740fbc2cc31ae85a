import { parse } from 'csv-parse/sync';
import type { Line } from './import-lines.js';

/** A CSV record: its cells, the line it starts on and its text (for the rejected-lines file). */
export type CsvRow = { line: number; cells: string[]; raw: string } | { line: number; problem: string; raw: string };

/** Records parsed in one call: the parser's set-up costs more than a short record's parse. */
const rowsPerParse = 500;
const bytesPerParse = 1024 * 1024;

/**
 * The records of a CSV file (RFC 4180: comma-separated, fields in double quotes may hold commas,
 * line breaks and doubled quotes), parsed by csv-parse, numbered by the line each starts on.
 * Blank lines are skipped. A record that cannot be parsed is a problem of its own: the records
 * around it are read as usual. A record never holds more than `maxRecordBytes`.
 */
export async function* csvRows(lines: AsyncIterable<Line>, maxRecordBytes: number): AsyncGenerator<CsvRow> {
  const pending: { line: number; raw: string }[] = [];
  let pendingBytes = 0;
  for await (const framed of frameRecords(lines, maxRecordBytes)) {
    if ('problem' in framed) {
      yield* parseRows(pending.splice(0));
      pendingBytes = 0;
      yield framed;
      continue;
    }
    pending.push(framed);
    pendingBytes += framed.raw.length;
    if (pending.length >= rowsPerParse || pendingBytes >= bytesPerParse) {
      yield* parseRows(pending.splice(0));
      pendingBytes = 0;
    }
  }
  yield* parseRows(pending);
}

/**
 * Physical lines joined into records: a line break inside a quoted field continues the record.
 * With quotes escaped by doubling, a record is complete when it holds an even number of quotes.
 * A record that grows past `maxRecordBytes` (most likely a quote never closed) is a problem, and
 * the next line starts a new record.
 */
async function* frameRecords(lines: AsyncIterable<Line>, maxRecordBytes: number): AsyncGenerator<CsvRow | { line: number; raw: string }> {
  let open: { line: number; texts: string[]; bytes: number; quotes: number } | null = null;
  for await (const line of lines) {
    if (!open && !('problem' in line) && line.text.trim() === '') continue;
    open ??= { line: line.number, texts: [], bytes: 0, quotes: 0 };
    open.texts.push(line.text);
    const raw = (): string => open?.texts.join('\n') ?? '';
    open.bytes += Buffer.byteLength(line.text) + 1;
    open.quotes += quotesOf(line.text);
    if ('problem' in line) {
      yield { line: open.line, problem: open.line === line.number ? line.problem : `line ${line.number}: ${line.problem}`, raw: raw() };
    } else if (open.bytes > maxRecordBytes) {
      yield { line: open.line, problem: `a quoted field is not closed within ${maxRecordBytes} bytes`, raw: raw().slice(0, 1000) };
    } else if (open.quotes % 2 === 0) {
      yield { line: open.line, raw: raw() };
    } else continue;
    open = null;
  }
  if (open) yield { line: open.line, problem: 'a quoted field is not closed at the end of the file', raw: open.texts.join('\n').slice(0, 1000) };
}

function quotesOf(text: string): number {
  let count = 0;
  for (let i = text.indexOf('"'); i !== -1; i = text.indexOf('"', i + 1)) count += 1;
  return count;
}

function* parseRows(records: { line: number; raw: string }[]): Generator<CsvRow> {
  if (records.length === 0) return;
  const parsed = parseCsv(records.map((r) => r.raw).join('\n'));
  if (Array.isArray(parsed) && parsed.length === records.length) {
    for (const [i, record] of records.entries()) yield { ...record, cells: parsed[i] ?? [] };
    return;
  }
  // A record of this set does not parse: each on its own, to name it.
  for (const record of records) {
    const one = parseCsv(record.raw);
    if (Array.isArray(one) && one.length === 1) yield { ...record, cells: one[0] ?? [] };
    else yield { ...record, problem: Array.isArray(one) ? 'not one CSV record' : one };
  }
}

/** The records of `text`, or the parser's message (without its line number, which is not the file's). */
function parseCsv(text: string): string[][] | string {
  try {
    return parse(text, { record_delimiter: '\n', relax_column_count: true }) as string[][];
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return `not a valid CSV record: ${message.replace(/ at line \d+/, '')}`;
  }
}
