/**
 * How a reply names a field inside a body: keys joined by dots, array indices in brackets, such as
 * `eventData.list[2].x`, or `[3].attributes` under a bulk request's array. Empty for the body itself.
 */
export function fieldPath(keys: readonly (string | number)[]): string {
  return keys.reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key), '');
}
