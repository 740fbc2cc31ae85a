/**
 * Values that JSON can carry but the store cannot keep as sent: PostgreSQL text and jsonb refuse
 * the NUL character and unpaired surrogates, and a number too large for a double (1e400) parses
 * to Infinity, which would be stored as null.
 */
function stringProblem(path: string, text: string): string | null {
  return text.includes('\u0000') || !text.isWellFormed()
    ? `${path} contains a NUL character or an unpaired surrogate, which cannot be stored`
    : null;
}

/** A message naming the first value (or key) of `value` that cannot be stored; null when all can. */
export function unstorableValue(value: unknown, path = 'body'): string | null {
  if (typeof value === 'string') return stringProblem(path, value);
  if (typeof value === 'number') return Number.isFinite(value) ? null : `${path} must be a finite number`;
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = unstorableValue(item, `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    const child = path === 'body' ? key : `${path}.${key}`;
    const found = stringProblem(child, key) ?? unstorableValue(item, child);
    if (found) return found;
  }
  return null;
}
