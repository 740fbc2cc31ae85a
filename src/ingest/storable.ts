/**
 * Values that JSON can carry but the store cannot keep as sent: PostgreSQL text and jsonb refuse
 * the NUL character and unpaired surrogates; a number too large for a double (1e400) parses to
 * Infinity, which would be stored as null; and beyond ±(2^53 − 1) a parsed number no longer tells
 * neighbouring integers apart (9007199254740993 arrives as 9007199254740992), so it is refused
 * rather than kept changed, whether written 100000000000000000000 or 1e20.
 */
function stringProblem(path: string, text: string): string | null {
  return text.includes('\u0000') || !text.isWellFormed()
    ? `${path} contains a NUL character or an unpaired surrogate, which cannot be stored`
    : null;
}

function numberProblem(path: string, value: number): string | null {
  if (!Number.isFinite(value)) return `${path} must be a finite number`;
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
    return `${path} must be a number from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}: beyond, it cannot be kept exactly (send it as a string)`;
  }
  return null;
}

/** A value still to check, and the key that leads to it (checked first, as keys come before values). */
interface Pending {
  value: unknown;
  /** The field path; '' for the item itself, named `body` in messages. */
  path: string;
  key?: string;
}

/**
 * A message naming the first value (or key) of `value`, in document order, that cannot be stored;
 * null when all can. It walks with its own stack, never by recursion.
 */
export function unstorableValue(value: unknown): string | null {
  const stack: Pending[] = [{ value, path: '' }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const name = next.path || 'body';
    const found = next.key === undefined ? null : stringProblem(name, next.key);
    if (found) return found;
    const item = next.value;
    if (typeof item === 'string') {
      const problem = stringProblem(name, item);
      if (problem) return problem;
    } else if (typeof item === 'number') {
      const problem = numberProblem(name, item);
      if (problem) return problem;
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push({ value: item[i], path: `${name}[${i}]` });
    } else if (typeof item === 'object' && item !== null) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        stack.push({ value: child, path: next.path ? `${next.path}.${key}` : key, key });
      }
    }
  }
  return null;
}
