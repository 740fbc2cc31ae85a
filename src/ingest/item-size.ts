/**
 * What an item may become once parsed. Its bytes are bounded by the body limit, but what the heap
 * holds of them depends on their shape: `[],` is 3 bytes on the wire and about 40 bytes parsed,
 * `{},` about 64 (docs/decisions.md, Limits). So an item may hold at most `maxItemValues` JSON
 * values (each object key, string, number, boolean, null, object and array counts one) and at most
 * `maxItemContainers` objects and arrays, counted on the raw bytes before anything is parsed.
 */
export const maxItemValues = 10_000;
export const maxItemContainers = 1_000;

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const openBracket = 0x5b;
const closeBrace = 0x7d;
const closeBracket = 0x5d;
const comma = 0x2c;
const colon = 0x3a;

/** Bytes that end a number or a literal (`true`, `null`): separators, closers and blanks. */
const endsScalar = new Uint8Array(256);
for (const byte of [comma, colon, closeBrace, closeBracket, 0x20, 0x09, 0x0a, 0x0d]) endsScalar[byte] = 1;

export interface BodyShape {
  /** Objects and arrays of the whole body, the array of a bulk request included. */
  containers: number;
  /** The first item past a limit, as a message naming it and the limit; null when none is. */
  problem: string | null;
  /**
   * Whether the body nests deeper than the depth asked: the parser then meets at most
   * `containerCap` objects and arrays, and the check of nesting names the place.
   */
  tooDeep: boolean;
}

/**
 * Objects and arrays counted at most: a body past this many is refused, whatever else is wrong
 * with it, before it is parsed (a bulk request of items at the limit holds 101 times the item's).
 */
export const containerCap = (maxItemContainers + 1) * 101;

/**
 * Where the string opened at `open` ends (the length of the bytes when it does not): the next quote
 * not escaped, that is with an even run of backslashes before it. Found natively, for long strings.
 */
function closingQuote(bytes: Buffer, open: number): number {
  for (let at = bytes.indexOf(quote, open + 1); at !== -1; at = bytes.indexOf(quote, at + 1)) {
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === backslash) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
  return bytes.length;
}

/** Where the first value starts, past blanks. */
function firstValueAt(bytes: Buffer, from: number): number {
  let at = from;
  while (bytes[at] === 0x20 || bytes[at] === 0x09 || bytes[at] === 0x0a || bytes[at] === 0x0d) at += 1;
  return at;
}

const count = (n: number): string => n.toLocaleString('en');
const itemName = (itemLevel: number, index: number): string => (itemLevel === 0 ? 'the item' : itemLevel === 1 ? `[${index}]` : `batch[${index}]`);

/**
 * Counts the values and the objects and arrays of each item of a JSON body, in one pass over its
 * bytes without parsing it: the items are the body itself (`itemLevel` 0) or the elements of its
 * top-level array (`itemLevel` 1, a bulk request), or the values one level further in (`itemLevel`
 * 2, the messages of a Segment batch, `{"batch": [...]}`). It reads only the structure (quotes, escapes,
 * brackets, separators): syntax errors are left to the parser. UTF-8 is safe to scan byte by
 * byte, since no byte of a multi-byte sequence is ASCII. A body nested deeper than `maxDepth` (the
 * body is level 1) is left to the check of nesting, which names the place, unless it holds more
 * than `containerCap` objects and arrays.
 */
export function bodyShape(bytes: Buffer, itemLevel: 0 | 1 | 2, maxDepth: number): BodyShape {
  // A leading byte order mark is dropped before parsing; here it would read as a number.
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  // A bulk body that is not an array is refused once parsed; until then it is one item.
  if (itemLevel === 1 && bytes[firstValueAt(bytes, start)] !== openBracket) itemLevel = 0;
  let depth = 0;
  let containers = 0;
  let problem: string | null = null;
  let tooDeep = false;
  let itemValues = 0;
  let itemContainers = 0;
  let itemIndex = -1;
  let inScalar = false;
  const length = bytes.length;
  for (let at = start; at < length; at += 1) {
    const byte = bytes[at] as number;
    if (inScalar) {
      if (endsScalar[byte] === 0) continue;
      inScalar = false;
    }
    let container = false;
    if (byte === quote) {
      at = closingQuote(bytes, at);
    } else if (byte === openBrace || byte === openBracket) {
      container = true;
    } else if (byte === closeBrace || byte === closeBracket) {
      depth -= 1;
      continue;
    } else if (endsScalar[byte] === 1) {
      continue;
    } else {
      inScalar = true;
    }
    // A value starts here.
    if (depth === itemLevel) {
      itemIndex += 1;
      itemValues = 0;
      itemContainers = 0;
    }
    if (depth >= itemLevel) itemValues += 1;
    if (container) {
      containers += 1;
      depth += 1;
      if (depth > itemLevel) itemContainers += 1;
      if (depth > maxDepth) tooDeep = true;
      if (containers > containerCap) {
        return { containers, tooDeep: false, problem: problem ?? `the body holds more than ${count(containerCap)} objects and arrays` };
      }
    }
    if (problem === null && itemValues > maxItemValues) {
      problem = `${itemName(itemLevel, itemIndex)} holds more than ${count(maxItemValues)} values: an item may hold at most ${count(maxItemValues)} (each object key, string, number, boolean, null, object and array counts one)`;
    } else if (problem === null && itemContainers > maxItemContainers) {
      problem = `${itemName(itemLevel, itemIndex)} holds more than ${count(maxItemContainers)} objects and arrays: an item may hold at most ${count(maxItemContainers)}`;
    }
  }
  return { containers, problem, tooDeep };
}
