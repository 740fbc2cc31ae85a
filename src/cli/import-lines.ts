import { createReadStream } from 'node:fs';

/**
 * A physical line of the input: its text (`crlf` when it ended in CR LF, whose CR is not in
 * `text`), or why it cannot be read (too long, not UTF-8) with its length in bytes and the double
 * quotes it held, all of them, so that a CSV reader knows whether a quoted field goes on past it.
 */
export type Line = { number: number; text: string; crlf?: true } | { number: number; problem: string; text: string; bytes: number; quotes: number };

export interface LineReaderOptions {
  /** A longer line is reported as a problem, and only its first bytes are kept meanwhile. */
  maxLineBytes: number;
  /** Called with the bytes read from the file so far, as they are read. */
  onBytes?: (bytesRead: number) => void;
}

const newline = 0x0a;
const carriageReturn = 0x0d;
const quote = 0x22;
/** The start of an over-long line kept for the rejected-lines file. */
const excerptBytes = 200;

/**
 * The lines of a file, read as the consumer asks for them: memory holds one read chunk and at
 * most one line of `maxLineBytes`, whatever the file's size. A trailing `\r` is dropped (CRLF
 * files), a UTF-8 byte order mark at the start is skipped, and every line must be valid UTF-8.
 */
export async function* readLines(path: string, options: LineReaderOptions): AsyncGenerator<Line> {
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const parts: Buffer[] = [];
  let partBytes = 0;
  let overlong = false;
  let quotes = 0;
  let lineLength = 0;
  let number = 0;
  let bytesRead = 0;

  const finish = (): Line => {
    number += 1;
    let bytes = Buffer.concat(parts, partBytes);
    parts.length = 0;
    partBytes = 0;
    const lineQuotes = quotes;
    const lineBytes = lineLength;
    quotes = 0;
    lineLength = 0;
    if (overlong) {
      overlong = false;
      const text = bytes.subarray(0, excerptBytes).toString('utf8');
      return { number, problem: `line is longer than ${options.maxLineBytes} bytes`, text, bytes: lineBytes, quotes: lineQuotes };
    }
    const crlf = bytes.at(-1) === carriageReturn;
    if (crlf) bytes = bytes.subarray(0, -1);
    if (number === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    try {
      const text = decoder.decode(bytes);
      return crlf ? { number, text, crlf } : { number, text };
    } catch {
      return { number, problem: 'line is not valid UTF-8', text: bytes.subarray(0, excerptBytes).toString('utf8'), bytes: lineBytes, quotes: lineQuotes };
    }
  };

  const keep = (piece: Buffer): void => {
    // A quote byte is never part of a multi-byte UTF-8 sequence: counted in bytes, even in a line
    // that is not UTF-8 or not kept whole.
    for (let i = piece.indexOf(quote); i !== -1; i = piece.indexOf(quote, i + 1)) quotes += 1;
    lineLength += piece.length;
    if (overlong) return;
    if (partBytes + piece.length > options.maxLineBytes) {
      overlong = true;
      // Only the excerpt is kept of a line that is refused anyway.
      const room = Math.max(0, excerptBytes - partBytes);
      if (room > 0) {
        parts.push(Buffer.from(piece.subarray(0, room)));
        partBytes += Math.min(room, piece.length);
      }
      return;
    }
    // A copy: the line may outlive the read chunk it came from.
    parts.push(Buffer.from(piece));
    partBytes += piece.length;
  };

  for await (const chunk of createReadStream(path, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) {
    bytesRead += chunk.length;
    options.onBytes?.(bytesRead);
    let start = 0;
    for (let end = chunk.indexOf(newline, start); end !== -1; end = chunk.indexOf(newline, start)) {
      keep(chunk.subarray(start, end));
      yield finish();
      start = end + 1;
    }
    if (start < chunk.length) keep(chunk.subarray(start));
  }
  if (partBytes > 0 || overlong) yield finish();
}
