import { unstorableValue } from '../ingest/storable.js';

/** Account names are 1 to 200 characters. */
export const maxAccountNameLength = 200;

/**
 * Why `value` cannot be the text `field` of an account (its name, a token's label), or null: a
 * string of 1 to `max` characters (code points, not UTF-16 units) once trimmed, without control
 * characters (U+0000 to U+001F, U+007F) and without unpaired surrogates, which PostgreSQL would keep
 * as U+FFFD. Those are the texts ingest refuses too (src/ingest/storable.ts).
 */
export function accountTextProblem(field: string, value: unknown, max: number): string | null {
  if (typeof value !== 'string') return `${field} is required and must be a string`;
  const length = [...value.trim()].length;
  if (length < 1 || length > max) return `${field} must be 1 to ${max} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${field} must not contain control characters`;
  if (unstorableValue(value) !== null) return `${field} must not contain an unpaired surrogate`;
  return null;
}

/** Why `name` cannot be an account's name, or null. */
export const accountNameProblem = (name: unknown): string | null => accountTextProblem('name', name, maxAccountNameLength);
