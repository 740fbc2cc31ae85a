/**
 * Integer literals a double cannot keep. Past ±(2^53 − 1) parsing rounds an integer written in
 * full (`9007199254740993` arrives as `9007199254740992`), so such a literal is refused by name
 * rather than stored changed. A number written with a fraction or an exponent (`1e20`, `6.02e23`)
 * asks for a double and is kept as the double it parses to.
 */

/** An integer literal of a body beyond ±(2^53 − 1), as written. */
export class InexactInteger {
  readonly #source: string;

  constructor(source: string) {
    this.#source = source;
  }

  /** An Idempotency-Key's body hash sees the digits as sent. */
  toJSON(): string {
    return this.#source;
  }
}

/** 2^53 has 16 digits: a body with no run of 16 digits holds no integer literal a double rounds. */
const longRun = 16;

const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= 0x30 && byte <= 0x39;

/**
 * Whether the raw bytes hold a run of 16 ASCII digits: a scan of the buffer, no copy of it. It
 * looks at every 16th byte, and only around a digit further: a byte that is not a digit rules out
 * every run through it, so most of a body is never read (this runs on every request's body).
 */
export function mayHoldInexactInteger(body: Uint8Array): boolean {
  let end = longRun - 1;
  while (end < body.length) {
    if (!isDigit(body[end])) {
      end += longRun;
      continue;
    }
    const start = end - longRun + 1;
    let at = end - 1;
    while (at >= start && isDigit(body[at])) at -= 1;
    if (at < start) return true;
    // No run ends before at + 16: each would hold the byte at `at`.
    end = at + longRun;
  }
  return false;
}

const integerLiteral = /^-?\d+$/;

/**
 * Whether JSON.parse gives its reviver the source text of each value (Node.js 21 and later; the
 * service runs on 24). Without it an integer literal past 2^53 cannot be told from a double and
 * would be stored rounded, so the service refuses to start (src/main.ts).
 */
export const reviverSeesSource: boolean = (() => {
  let source: string | undefined;
  JSON.parse('1', (_key, value: unknown, context?: { source?: string }) => {
    source = context?.source;
    return value;
  });
  return source === '1';
})();

/**
 * Parses `text` (whose nesting is already known to be within the limit: the reviver recurses) as
 * JSON, with every integer literal beyond ±(2^53 − 1) kept as an InexactInteger
 * (the reviver's source text says how a number was written), for the storable-value check to
 * refuse by its field name.
 */
export function parseMarkingInexactIntegers(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined && integerLiteral.test(context.source)
      ? new InexactInteger(context.source)
      : value,
  );
}
