/** What the ingest activity keeps of a client's body or message: at most 2 KB of UTF-8 text. */
export const excerptBytes = 2048;

export interface Excerpt {
  text: string;
  /** Whether the text is the start of something longer. */
  truncated: boolean;
}

/** Where to cut `bytes` at most `max` bytes in without splitting a UTF-8 character. */
function characterBoundary(bytes: Uint8Array, max: number): number {
  if (bytes.length <= max) return bytes.length;
  let cut = max;
  // Continuation bytes are 10xxxxxx: back off to the start of the character they belong to.
  while (cut > 0 && ((bytes[cut] as number) & 0xc0) === 0x80) cut -= 1;
  return cut;
}

/**
 * Text for PostgreSQL: a NUL cannot be stored in text, so it becomes U+FFFD (as the decoder does
 * for bytes that are not UTF-8).
 */
const storable = (text: string): string => (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text);

/** The first `max` bytes of raw body bytes as text, cut at a character boundary. */
export function excerptOfBytes(bytes: Uint8Array, max = excerptBytes): Excerpt {
  const cut = characterBoundary(bytes, max);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, cut).toString('utf8');
  // Bytes that are not UTF-8 decode to U+FFFD, three bytes each: cut the text again if it grew.
  const again = excerptOfText(storable(text), max);
  return { text: again.text, truncated: cut < bytes.length || again.truncated };
}

/** The first `max` UTF-8 bytes of `text`, cut at a character boundary. */
export function excerptOfText(text: string, max = excerptBytes): Excerpt {
  // Most texts are short: no encoding needed when even 3 bytes per UTF-16 unit fit.
  if (text.length * 3 <= max) return { text: storable(text), truncated: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { text: storable(text), truncated: false };
  const cut = characterBoundary(bytes, max);
  return { text: storable(bytes.subarray(0, cut).toString('utf8')), truncated: true };
}

/** A JSON value sent by a client, as compact JSON text, cut the same way. */
export function excerptOfValue(value: unknown, max = excerptBytes): Excerpt {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return excerptOfText(text, max);
}
