import { InvalidItemError } from './errors.js';
import type { ItemKind } from './types.js';

/** How deep the service lets an item nest objects and arrays (the item itself is level 1). */
export const maxNestingDepth = 64;

/** The deepest nesting of objects and arrays in a JSON text: a scan that skips strings. */
export function nestingDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i += 1) {
    const code = json.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i += 1; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) deepest = Math.max(deepest, (depth += 1));
    else if (code === 0x7d || code === 0x5d) depth -= 1;
  }
  return deepest;
}

/**
 * The item as JSON, as it will be sent. An item that cannot be (a cycle, a BigInt, undefined) or
 * that nests deeper than the service allows is refused here: the service would refuse the whole
 * bulk request for it, failing the items around it.
 */
export function serialise(kind: ItemKind, item: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(item);
  } catch (error) {
    throw new InvalidItemError(kind, `${kind} item is not JSON-serialisable: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (json === undefined) throw new InvalidItemError(kind, `${kind} item is not JSON-serialisable: ${typeof item}`);
  const depth = nestingDepth(json);
  if (depth > maxNestingDepth) {
    throw new InvalidItemError(kind, `${kind} item nests objects and arrays ${depth} levels deep: the service takes at most ${maxNestingDepth}`);
  }
  return json;
}
