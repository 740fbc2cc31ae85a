import { fieldPath } from './field-path.js';

/**
 * How deep an item may nest objects and arrays: the item itself is level 1, so `eventData` is
 * level 2 and can hold 62 more. Deeper JSON is no tracking data anyone sends, and every walk over
 * an item (the schema check, the storable-value check, the hash of an Idempotency-Key, the event
 * store's own serialisation) then stays far from the call stack's limit.
 */
export const maxNestingDepth = 64;

/** An object or array met on the walk, with the way back to the root for naming it. */
interface Container {
  value: object;
  depth: number;
  parent: Container | null;
  key: string | number;
}

function pathOf(container: Container): string {
  const keys: (string | number)[] = [];
  for (let at: Container | null = container; at?.parent; at = at.parent) keys.push(at.key);
  return fieldPath(keys.reverse());
}

/** Whether any container is deeper than `maxDepth`: a walk that keeps only values and depths, for speed. */
function tooDeep(body: object, maxDepth: number): boolean {
  const values: object[] = [body];
  const depths: number[] = [1];
  for (let value = values.pop(); value; value = values.pop()) {
    const depth = depths.pop() as number;
    if (depth > maxDepth) return true;
    if (Array.isArray(value)) {
      for (const child of value as unknown[]) {
        if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      // A parsed body's objects are plain: for...in sees just their own keys, without a copy.
      for (const key in value) {
        const child = (value as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null) {
          values.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** The path to a container deeper than `maxDepth`; only called once one is known to exist. */
function deepPath(body: object, maxDepth: number): string {
  const stack: Container[] = [{ value: body, depth: 1, parent: null, key: '' }];
  for (let container = stack.pop(); container; container = stack.pop()) {
    if (container.depth > maxDepth) return pathOf(container);
    const { value, depth } = container;
    const entries: [string | number, unknown][] = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
    for (const [key, child] of entries) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1, parent: container, key });
    }
  }
  return '';
}

/**
 * A message naming a container of a parsed JSON body nested deeper than `maxDepth` levels (the
 * body is level 1); null when none is. It walks with its own stack, never by recursion, so that
 * any depth the parser accepted can be checked; the path is worked out only for a body refused.
 */
export function nestingProblem(body: unknown, maxDepth: number): string | null {
  if (typeof body !== 'object' || body === null || !tooDeep(body, maxDepth)) return null;
  return `${deepPath(body, maxDepth)} is nested too deep: an item may nest objects and arrays at most ${maxNestingDepth} levels`;
}
