import { InexactInteger } from './exact-integers.js';
import { fieldPath } from './field-path.js';

/**
 * Values that JSON can carry but the store cannot keep as sent: PostgreSQL text and jsonb refuse
 * the NUL character and unpaired surrogates; a number too large for a double (1e400) parses to
 * Infinity, which would be stored as null; and an integer literal beyond ±(2^53 − 1) would be
 * rounded (9007199254740993 arrives as 9007199254740992): the body parser marks those
 * (src/ingest/exact-integers.ts), and they are refused rather than kept changed.
 */
const unstorableText = (text: string): boolean => text.includes('\u0000') || !text.isWellFormed();
const textProblem = 'contains a NUL character or an unpaired surrogate, which cannot be stored';
const rangeProblem = `is an integer beyond -${Number.MAX_SAFE_INTEGER}..${Number.MAX_SAFE_INTEGER}, which cannot be kept exactly (send it as a string)`;

/** What is wrong with a string or number, as the end of a message naming it; null when nothing is. */
function scalarProblem(value: unknown): string | null {
  if (typeof value === 'string') return unstorableText(value) ? textProblem : null;
  if (value instanceof InexactInteger) return rangeProblem;
  if (typeof value !== 'number') return null;
  return Number.isFinite(value) ? null : 'must be a finite number';
}

/** An object or array being walked: its keys (null for an array), its next child, its place in the item. */
interface Frame {
  value: Record<string, unknown> | unknown[];
  keys: string[] | null;
  next: number;
  parent: Frame | null;
  /** The key or index under which the parent holds it. */
  key: string | number;
}

function frameOf(value: object, parent: Frame | null, key: string | number): Frame {
  return Array.isArray(value)
    ? { value: value as unknown[], keys: null, next: 0, parent, key }
    : { value: value as Record<string, unknown>, keys: Object.keys(value), next: 0, parent, key };
}

/** The path of child `key` of `frame` (worked out only for a message). */
function pathOf(frame: Frame, key: string | number): string {
  const keys = [key];
  for (let at: Frame | null = frame; at.parent; at = at.parent) keys.push(at.key);
  return fieldPath(keys.reverse());
}

/**
 * A message naming the first value (or key) of `item`, in document order, that cannot be stored;
 * null when all can. It walks with its own stack, never by recursion.
 */
export function unstorableValue(item: unknown): string | null {
  const itself = scalarProblem(item);
  if (itself) return `body ${itself}`;
  if (typeof item !== 'object' || item === null) return null;
  let frame: Frame | null = frameOf(item, null, '');
  while (frame) {
    const { value, keys } = frame;
    if (frame.next === (keys ?? (value as unknown[])).length) {
      frame = frame.parent;
      continue;
    }
    const index = frame.next++;
    const key = keys ? (keys[index] as string) : index;
    if (typeof key === 'string' && unstorableText(key)) return `${pathOf(frame, key)} ${textProblem}`;
    const child = keys ? (value as Record<string, unknown>)[key] : (value as unknown[])[index];
    const problem = scalarProblem(child);
    if (problem) return `${pathOf(frame, key)} ${problem}`;
    if (typeof child === 'object' && child !== null) frame = frameOf(child, frame, key);
  }
  return null;
}
