import { isUtf8 } from 'node:buffer';
import { parse as parseContentType } from 'content-type';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError } from '../errors.js';
import { excerptOfBytes, type Excerpt } from '../ingest/excerpt.js';
import { mayHoldInexactInteger, parseMarkingInexactIntegers } from '../ingest/exact-integers.js';
import { bodyShape } from '../ingest/item-size.js';
import { maxNestingDepth, nestingProblem } from '../ingest/nesting.js';
import { busy, parsedBodyCost, reservationOf } from './body-budget.js';
import { readBody } from './body-reader.js';
import { bodyEncodings, contentEncodingOf } from './content-encoding.js';
import { defaultMinBodyBytesPerSecond } from '../config.js';

/** Body limits in bytes: 1 MiB for one item, 5 MiB for a bulk request. */
export const singleItemBytes = 1024 * 1024;
export const bulkBytes = 5 * 1024 * 1024;

/** The raw body of each request read, for the excerpt of a rejected one (gone with the request). */
const rawBodies = new WeakMap<Request, Buffer>();

/** The start of what was read of the request's body; null when nothing was (415, 429, a 413 refused on its length). */
export function bodyExcerpt(req: Request): Excerpt | null {
  const raw = rawBodies.get(req);
  return raw ? excerptOfBytes(raw) : null;
}

/** Drops what was read of a request's body: nothing of it is excerpted (it holds a credential). */
export function forgetRawBody(req: Request): void {
  rawBodies.delete(req);
}

/** The charset a JSON body declares, lowercased; UTF-8 when none is. */
function charsetOf(req: Request): string {
  try {
    return (parseContentType(req.get('content-type') ?? '').parameters.charset ?? 'utf-8').toLowerCase();
  } catch {
    return 'utf-8';
  }
}

export interface JsonBodyOptions {
  /** The nesting the body may have: checked before anything else walks it. */
  maxDepth?: number;
  /** Where the items are, for the limits of item-size.ts: 0, the body; 1, the elements of its top-level array; 2, a Segment batch's messages. */
  itemLevel?: 0 | 1 | 2;
  /** The minimum data rate of the body, bytes per second (0: none); default config.ts's. */
  minBytesPerSecond?: number;
  /**
   * Also take `text/plain` bodies holding JSON: what a page's sendBeacon and a fetch without a
   * preflight send (docs/browser.md). The ingest routes do; the others take JSON only.
   */
  textPlain?: boolean;
}

/**
 * JSON bodies only (and text/plain holding JSON, with `textPlain`): anything else is 415, as is a Content-Encoding other than those of
 * `bodyEncodings` or a charset other than UTF-8; size, syntax, compression and encoding errors
 * become form A replies. `limit` is of the decompressed bytes: a compressed body is inflated only
 * until it passes the limit (413). On an ingest route the body grows its reservation of the body
 * budget as it arrives, then by what it will cost once parsed (body-budget.ts), worked out from
 * its bytes before it is parsed; an item past the limits of item-size.ts is refused then (413).
 */
export function jsonBody(limit: number, options: JsonBodyOptions = {}): RequestHandler[] {
  const { maxDepth = maxNestingDepth, itemLevel = 0, minBytesPerSecond = defaultMinBodyBytesPerSecond, textPlain = false } = options;
  const types = textPlain ? ['application/json', 'text/plain'] : ['application/json'];
  const wrongType = `Content-Type must be ${types.join(' or ')}${textPlain ? ' (holding JSON)' : ''}`;
  return [
    (req: Request, _res: Response, next: NextFunction) => {
      if (!req.is(types)) throw new AppError(415, wrongType, 'request', 'unsupported_media_type');
      if (!bodyEncodings.includes(contentEncodingOf(req))) {
        throw new AppError(415, `Content-Encoding must be one of ${bodyEncodings.join(', ')}`, 'request', 'unsupported_media_type');
      }
      const charset = charsetOf(req);
      if (charset !== 'utf-8' && charset !== 'utf8') throw new AppError(415, 'body must be UTF-8 JSON', 'request', 'unsupported_media_type');
      next();
    },
    async (req: Request, res: Response, next: NextFunction) => {
      const reservation = reservationOf(req);
      const raw = await readBody(req, res, { limit, encoding: contentEncodingOf(req), reservation, minBytesPerSecond });
      rawBodies.set(req, raw);
      // JSON is UTF-8 (RFC 8259, 8.1): decoding would turn bytes that are not (`C0 AF`, an encoded
      // surrogate `ED A0 80`, `FF`) into U+FFFD and store a changed value, so such a body is refused.
      if (!isUtf8(raw)) throw new AppError(400, 'body is not valid UTF-8', 'request', 'invalid_utf8');
      const shape = bodyShape(raw, itemLevel, maxDepth);
      // Too deep is refused by the check of nesting below, which names the place.
      if (shape.problem && !shape.tooDeep) throw new AppError(413, shape.problem, 'request', 'too_large');
      // A body with a run of 16 digits is parsed a second time, the rare way, to find integers a
      // double rounds: each value then also passes through a reviver, with its source text.
      const longNumbers = mayHoldInexactInteger(raw);
      const cost = parsedBodyCost(raw.length, shape.containers) * (longNumbers ? 2 : 1);
      if (reservation && !reservation.grow(cost - reservation.held)) throw busy();
      // The decoder keeps a leading byte order mark, which RFC 8259 lets a parser ignore.
      const text = raw.toString('utf8').replace(/^\uFEFF/, '');
      let body: unknown = {};
      try {
        // An empty body reads as {}, so that it is refused for the fields it lacks.
        if (raw.length > 0) body = JSON.parse(text);
      } catch {
        throw new AppError(400, 'body is not valid JSON', 'request', 'malformed_json');
      }
      // Depth first: the second parse of a body with long numbers recurses as deep as it nests.
      const tooDeep = nestingProblem(body, maxDepth);
      if (tooDeep) throw new AppError(400, tooDeep, 'request', 'too_deep');
      if (!longNumbers) {
        req.body = body;
      } else {
        // The first tree is dropped before the second is made.
        body = undefined;
        req.body = parseMarkingInexactIntegers(text);
      }
      next();
    },
  ];
}
