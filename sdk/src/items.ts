import { InvalidItemError } from './errors.js';
import type { ItemKind } from './types.js';

/** How deep the service lets an item nest objects and arrays (the item itself is level 1). */
export const maxNestingDepth = 64;

/**
 * How many values (each object key, string, number, boolean, null, object and array) and how many
 * objects and arrays the service lets an item hold (docs/decisions.md of the service, Limits).
 */
export const maxItemValues = 10_000;
export const maxItemContainers = 1_000;

export interface JsonShape {
  /** The deepest nesting of objects and arrays (the item itself is level 1). */
  depth: number;
  values: number;
  containers: number;
}

/** The shape of a compact JSON text (JSON.stringify's): a scan that skips strings. */
export function jsonShape(json: string): JsonShape {
  let depth = 0;
  let deepest = 0;
  let values = 0;
  let containers = 0;
  let inString = false;
  let inScalar = false;
  for (let i = 0; i < json.length; i += 1) {
    const code = json.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i += 1; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
      continue;
    }
    const structural = code === 0x22 || code === 0x7b || code === 0x5b || code === 0x7d || code === 0x5d || code === 0x2c || code === 0x3a;
    if (inScalar && !structural) continue;
    inScalar = false;
    if (code === 0x22) {
      inString = true;
      values += 1;
    } else if (code === 0x7b || code === 0x5b) {
      values += 1;
      containers += 1;
      deepest = Math.max(deepest, (depth += 1));
    } else if (code === 0x7d || code === 0x5d) depth -= 1;
    else if (!structural) {
      inScalar = true;
      values += 1;
    }
  }
  return { depth: deepest, values, containers };
}

/**
 * The item as JSON, as it will be sent. An item that cannot be (a cycle, a BigInt, undefined),
 * that nests deeper or holds more than the service allows is refused here: the service would refuse the whole
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
  const { depth, values, containers } = jsonShape(json);
  if (depth > maxNestingDepth) {
    throw new InvalidItemError(kind, `${kind} item nests objects and arrays ${depth} levels deep: the service takes at most ${maxNestingDepth}`);
  }
  if (values > maxItemValues) throw new InvalidItemError(kind, `${kind} item holds ${values} values (object keys included): the service takes at most ${maxItemValues}`);
  if (containers > maxItemContainers) throw new InvalidItemError(kind, `${kind} item holds ${containers} objects and arrays: the service takes at most ${maxItemContainers}`);
  return json;
}
