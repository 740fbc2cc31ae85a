import { parse } from 'csv-parse/sync';
import type { Line } from './import-lines.js';

/**
 * A CSV record: its cells, the line it starts on and its text (for the rejected-lines file); or a
 * record that cannot be read; or a quoted field that is never closed (`unclosed`), after which
 * nothing more is read: where its record ends cannot be known.
 */
export type CsvRow =
  | { line: number; cells: string[]; raw: string }
  | { line: number; problem: string; raw: string }
  | { line: number; unclosed: string };

/** Records parsed in one call: the parser's set-up costs more than a short record's parse. */
const rowsPerParse = 500;
const bytesPerParse = 1024 * 1024;
/** The start of a record kept for the rejected-lines file when it cannot be read. */
const excerptChars = 1000;

/**
 * The records of a CSV file (RFC 4180: comma-separated, fields in double quotes may hold commas,
 * line breaks and doubled quotes), parsed by csv-parse, numbered by the line each starts on.
 * Blank lines are skipped. A record that cannot be parsed is a problem of its own: the records
 * around it are read as usual. A quoted field still open after `maxRecordBytes`, or at the end of
 * the file, ends the rows (`unclosed`): no later line is read as a record of its own.
 */
export async function* csvRows(lines: AsyncIterable<Line>, maxRecordBytes: number): AsyncGenerator<CsvRow> {
  const pending: { line: number; raw: string }[] = [];
  let pendingBytes = 0;
  for await (const framed of frameRecords(lines, maxRecordBytes)) {
    if ('problem' in framed || 'unclosed' in framed) {
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

interface OpenRecord {
  line: number;
  /** Its text so far, with the line breaks it holds (CR LF or LF, as in the file). */
  raw: string;
  bytes: number;
  quotes: number;
  /** Why it cannot be read, once one of its lines could not be. */
  problem: string | null;
}

/**
 * Physical lines joined into records: a line break inside a quoted field continues the record and
 * is kept as it is in the file (CR LF stays CR LF). With quotes escaped by doubling, a record is
 * complete when it holds an even number of quotes; that holds for a line that could not be read
 * too, whose quotes the line reader counted.
 */
async function* frameRecords(lines: AsyncIterable<Line>, maxRecordBytes: number): AsyncGenerator<CsvRow | { line: number; raw: string }> {
  let open: OpenRecord | null = null;
  for await (const line of lines) {
    const unreadable = 'problem' in line;
    if (!open && !unreadable && line.text.trim() === '') continue;
    if (open) open.raw += '\n';
    open ??= { line: line.number, raw: '', bytes: 0, quotes: 0, problem: null };
    if (unreadable) {
      open.problem ??= open.line === line.number ? line.problem : `line ${line.number}: ${line.problem}`;
      open.quotes += line.quotes;
      open.bytes += line.bytes + 1;
    } else {
      open.quotes += quotesOf(line.text);
      open.bytes += Buffer.byteLength(line.text) + 1;
    }
    // A record that cannot be read keeps only its start, for the rejected-lines file.
    if (open.problem === null || open.raw.length < excerptChars) open.raw += `${line.text}${!unreadable && line.crlf ? '\r' : ''}`;
    if (open.quotes % 2 === 0) {
      // The CR of a CR LF that ends the record is no part of it.
      const raw = open.raw.endsWith('\r') ? open.raw.slice(0, -1) : open.raw;
      yield open.problem === null ? { line: open.line, raw } : { line: open.line, problem: open.problem, raw: raw.slice(0, excerptChars) };
      open = null;
    } else if (open.bytes > maxRecordBytes) {
      yield { line: open.line, unclosed: `a quoted field opened on line ${open.line} is not closed within ${maxRecordBytes} bytes` };
      return;
    }
  }
  if (open) yield { line: open.line, unclosed: `a quoted field opened on line ${open.line} is not closed at the end of the file` };
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
