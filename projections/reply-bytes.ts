/**
 * The byte bounds of read replies (docs/decisions.md, Read replies bounded in bytes): a page stops
 * before the item that would take it past replyBudgetBytes (its first item always comes), and a
 * stored payload whose JSON text passes inlinePayloadBytes is shown in a list as a truncation
 * marker instead (its size and an excerpt); GET .../events/:eventId gives it in full.
 */

/** Bytes of JSON a page of a read reply holds at most, past its first item. */
export const replyBudgetBytes = 1024 * 1024;

/** A payload (event data, metadata, attributes) larger than this as JSON text is truncated in lists. */
export const inlinePayloadBytes = 4096;

/** Characters of a truncated payload's JSON text shown as its excerpt. */
export const excerptChars = 512;

/** What a list shows of a payload it leaves out. */
export interface TruncatedPayload {
  /** Bytes of the payload's JSON text (UTF-8). */
  bytes: number;
  /** The start of that text. */
  excerpt: string;
}

/** The payloads an item left out, by the name of the field that holds null in their place. */
export type Truncations = Record<string, TruncatedPayload>;

const sizedColumn = (name: string): string => `${name}__bytes`;
const excerptColumn = (name: string): string => `${name}__excerpt`;

/**
 * Select items for a json(b) expression `expr` shown as `name`: the value only when its JSON text
 * is at most inlinePayloadBytes (else null), its size, and, when left out, its excerpt. A large
 * value never leaves PostgreSQL. `text` is `expr` as text: a column of a LATERAL (`OFFSET 0`, so
 * that it is made once a row) where the caller has one, else made here for each use.
 */
export function payloadColumns(expr: string, name: string, text = `(${expr})::text`): string {
  const size = `octet_length(${text})`;
  return `CASE WHEN ${size} <= ${inlinePayloadBytes} THEN ${expr} END AS ${name},
    ${size} AS ${sizedColumn(name)},
    CASE WHEN ${size} > ${inlinePayloadBytes} THEN left(${text}, ${excerptChars}) END AS ${excerptColumn(name)}`;
}

/** A LATERAL giving `expr` as text once per row, as `alias`.t, for payloadColumns. */
export const payloadText = (expr: string, alias: string): string => `CROSS JOIN LATERAL (SELECT (${expr})::text AS t OFFSET 0) ${alias}`;

/**
 * The payload of a row read with payloadColumns(…, name): its value, or null with its truncation
 * recorded in `truncations`.
 */
export function payloadOf<T>(row: Record<string, unknown>, name: string, field: string, truncations: Truncations): T | null {
  const excerpt = row[excerptColumn(name)];
  if (typeof excerpt === 'string') {
    truncations[field] = { bytes: Number(row[sizedColumn(name)]), excerpt };
    return null;
  }
  return row[name] as T | null;
}

/** `truncated` for an item: present only when something was left out. */
export const truncatedField = (truncations: Truncations): { truncated?: Truncations } =>
  Object.keys(truncations).length > 0 ? { truncated: truncations } : {};

/** A value shown in a list: as is when its JSON text is small, else null with its truncation in `truncations`. */
export function shownPayload<T>(value: T, field: string, truncations: Truncations): T | null {
  const json = JSON.stringify(value) ?? 'null';
  if (json.length <= inlinePayloadBytes / 3) return value;
  const bytes = Buffer.byteLength(json);
  if (bytes <= inlinePayloadBytes) return value;
  // A copy, not a slice: V8 keeps the whole text alive behind a slice of it.
  truncations[field] = { bytes, excerpt: Buffer.from(json.slice(0, excerptChars), 'utf8').toString('utf8') };
  return null;
}

/** Bytes of `item` as JSON in a reply. */
export const jsonBytes = (item: unknown): number => Buffer.byteLength(JSON.stringify(item) ?? 'null');

/**
 * How many of `items`, in order, fit a page of `budget` bytes of JSON: at least one (a page always
 * makes progress), then each as long as the total stays within the budget.
 */
export function countFitting(items: readonly unknown[], budget = replyBudgetBytes): number {
  let total = 0;
  for (let i = 0; i < items.length; i += 1) {
    total += jsonBytes(items[i]) + 1;
    if (i > 0 && total > budget) return i;
  }
  return items.length;
}

/** An opaque cursor of `parts` (a JSON array), tagged with the listing it belongs to. */
export const encodeCursorOf = (tag: string, parts: readonly (string | number)[]): string => Buffer.from(JSON.stringify([tag, ...parts])).toString('base64url');

/** The parts of a cursor made by encodeCursorOf with `tag` whose types are `shape`; null for anything else. */
export function decodeCursorOf(tag: string, cursor: string, shape: readonly ('string' | 'integer')[]): (string | number)[] | null {
  if (cursor.length > 512) return null;
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(value) || value.length !== shape.length + 1 || value[0] !== tag) return null;
    const parts = value.slice(1) as unknown[];
    const fits = parts.every((part, i) => (shape[i] === 'string' ? typeof part === 'string' : Number.isSafeInteger(part) && (part as number) >= 0));
    return fits ? (parts as (string | number)[]) : null;
  } catch {
    return null;
  }
}
