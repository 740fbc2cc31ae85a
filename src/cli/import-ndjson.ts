import type { Line } from './import-lines.js';
import type { ImportRecord } from './import-record.js';

/**
 * The items of an NDJSON file: one JSON object a line; blank lines are skipped. A line that is
 * not a JSON object is a rejected record; the service checks the item's fields.
 */
export async function* ndjsonRecords(lines: AsyncIterable<Line>): AsyncGenerator<ImportRecord> {
  for await (const line of lines) {
    if ('problem' in line) {
      yield { line: line.number, problem: line.problem, input: line.text };
      continue;
    }
    if (line.text.trim() === '') continue;
    yield parseNdjsonLine(line.number, line.text);
  }
}

export function parseNdjsonLine(number: number, text: string): ImportRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { line: number, problem: `not valid JSON: ${reason}`, input: text };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const shape = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    return { line: number, problem: `an item must be a JSON object, not ${shape}`, input: text };
  }
  return { line: number, item: value as Record<string, unknown> };
}
