import { looksLikeDateTime } from '../ingest/timestamps.js';

/** The four types of a custom attribute (docs/spec.md 2.1 rule 6, 8). */
export const customTypes = ['number', 'string', 'boolean', 'datetime'] as const;
export type CustomType = (typeof customTypes)[number];

export function isCustomType(value: string): value is CustomType {
  return (customTypes as readonly string[]).includes(value);
}

export type CellValue = string | number | boolean;

/**
 * Decimal numbers as a spreadsheet writes them. A leading zero or sign (`007`, `+49`) is kept as
 * text: those are codes and phone numbers, which lose their meaning as numbers.
 */
const decimal = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const integer = /^-?(?:0|[1-9]\d*)$/;
/** In a column declared a number, any decimal is one. */
const declaredDecimal = /^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** The number a cell holds, or null: an integer must be exact in JSON (within ±(2^53 − 1)). */
function numberOf(text: string, form = decimal): number | null {
  if (!form.test(text)) return null;
  const value = Number(text);
  if (!Number.isFinite(value)) return null;
  if (!/[.eE]/.test(text) && !Number.isSafeInteger(value)) return null;
  return value;
}

function booleanOf(text: string): boolean | null {
  const lower = text.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : null;
}

/**
 * A CSV cell's value and type, inferred: `true`/`false` (any case) a boolean, a decimal number a
 * number, an ISO 8601 date-time (the forms of docs/spec.md 2.6, or with `Z`) a datetime, anything else a
 * string. A datetime stays the text it is: the service reads it as one.
 */
export function inferCell(text: string): { value: CellValue; type: CustomType } {
  const bool = booleanOf(text);
  if (bool !== null) return { value: bool, type: 'boolean' };
  const number = numberOf(text);
  if (number !== null) return { value: number, type: 'number' };
  return { value: text, type: looksLikeDateTime(text) ? 'datetime' : 'string' };
}

/** A cell read as the type its column declares, or why it is not one. */
export function cellAs(text: string, type: CustomType | 'integer'): { value: CellValue } | { problem: string } {
  switch (type) {
    case 'string':
      return { value: text };
    case 'datetime':
      return looksLikeDateTime(text) ? { value: text } : { problem: `'${excerpt(text)}' is not an ISO 8601 date-time` };
    case 'boolean': {
      const value = booleanOf(text);
      return value === null ? { problem: `'${excerpt(text)}' is not true or false` } : { value };
    }
    case 'number': {
      const value = numberOf(text, declaredDecimal);
      return value === null ? { problem: `'${excerpt(text)}' is not a number` } : { value };
    }
    case 'integer': {
      const value = integer.test(text) ? numberOf(text) : null;
      return value === null ? { problem: `'${excerpt(text)}' is not an integer` } : { value };
    }
  }
}

function excerpt(text: string): string {
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}
