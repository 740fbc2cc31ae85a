import { isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { AppError } from '../errors.js';
import { excerptOfBytes, type Excerpt } from '../ingest/excerpt.js';
import { mayHoldInexactInteger, parseMarkingInexactIntegers } from '../ingest/exact-integers.js';
import { maxNestingDepth, nestingProblem } from '../ingest/nesting.js';

/** Body limits in bytes: 1 MiB for one item, 5 MiB for a bulk request. */
export const singleItemBytes = 1024 * 1024;
export const bulkBytes = 5 * 1024 * 1024;

/**
 * The Content-Encodings a JSON body may come in: body-parser inflates them as it reads, and the
 * body limit applies to the inflated bytes. Any other (zstd too, which only some Node versions
 * inflate; a list such as `gzip, br`) gets 415.
 */
export const bodyEncodings: readonly string[] = ['identity', 'gzip', 'deflate', 'br'];

/** The request's Content-Encoding, lowercased; `identity` when none is given. */
export function contentEncodingOf(req: Request): string {
  return (req.get('content-encoding') || 'identity').trim().toLowerCase();
}

/** Whether the body is sent compressed: what it holds once read is then known only by reading it. */
export const sentCompressed = (req: Request): boolean => contentEncodingOf(req) !== 'identity';

/** A decompression error of node:zlib (corrupt or truncated data): it has an errno, body-parser's own errors a `type`. */
const isZlibError = (error: unknown): error is Error => typeof (error as { errno?: unknown }).errno === 'number' && !(error as { type?: unknown }).type;

/** `1mb`, `64kb`: a limit as the 413 reply names it. */
const limitText = (bytes: number): string => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)}mb` : `${bytes / 1024}kb`);

/** Thrown by the parser's verify hook: body-parser passes its `type` on. */
class UndecodableBody extends Error {
  constructor(readonly type: 'charset.unsupported' | 'encoding.invalid') {
    super(type);
  }
}

/**
 * JSON is UTF-8 (RFC 8259, 8.1). The decoder would turn bytes that are not UTF-8 (`C0 AF`, an
 * encoded surrogate `ED A0 80`, `FF`) into U+FFFD and store a changed value, so such a body is
 * refused whole. A leading byte order mark is valid UTF-8 and the decoder drops it.
 */
function utf8Only(req: Request, _res: Response, body: Buffer, charset: string): void {
  rawBodies.set(req, body);
  if (charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') throw new UndecodableBody('charset.unsupported');
  if (!isUtf8(body)) throw new UndecodableBody('encoding.invalid');
  if (mayHoldInexactInteger(body)) bodiesWithLongNumbers.set(req, body);
}

/** The raw body of each request read, for the excerpt of a rejected one (gone with the request). */
const rawBodies = new WeakMap<Request, Buffer>();

/** The start of what was read of the request's body; null when nothing was (415, 429, a 413 refused on its length). */
export function bodyExcerpt(req: Request): Excerpt | null {
  const raw = rawBodies.get(req);
  return raw ? excerptOfBytes(raw) : null;
}

/** Raw bodies with a run of 16 digits: parsed again, the rare way, to find integers a double rounds. */
const bodiesWithLongNumbers = new WeakMap<Request, Buffer>();

function reparsed(req: Request): unknown {
  const raw = bodiesWithLongNumbers.get(req);
  if (!raw) return req.body;
  bodiesWithLongNumbers.delete(req);
  // The decoder drops a leading byte order mark; JSON.parse would not.
  return parseMarkingInexactIntegers(raw.toString('utf8').replace(/^\uFEFF/, ''));
}

/**
 * JSON bodies only: anything else is 415, as is a Content-Encoding other than those of
 * `bodyEncodings`; size, syntax, compression and encoding errors become form A replies. `limit` is
 * of the decompressed bytes: a compressed body is inflated only until it passes the limit (413).
 * `maxDepth` is the nesting the body may have: checked before anything else walks it.
 */
export function jsonBody(limit: number, maxDepth = maxNestingDepth): RequestHandler[] {
  const parse = express.json({ limit, strict: false, type: () => true, verify: utf8Only });
  return [
    (req: Request, _res: Response, next: NextFunction) => {
      if (!req.is('application/json')) {
        throw new AppError(415, 'Content-Type must be application/json', 'request', 'unsupported_media_type');
      }
      if (!bodyEncodings.includes(contentEncodingOf(req))) {
        throw new AppError(415, `Content-Encoding must be one of ${bodyEncodings.join(', ')}`, 'request', 'unsupported_media_type');
      }
      next();
    },
    (req: Request, res: Response, next: NextFunction) => {
      parse(req, res, (error?: unknown) => {
        if (!error) {
          // Depth first: the second parse of a body with long numbers recurses as deep as it nests.
          const tooDeep = nestingProblem(req.body, maxDepth);
          if (tooDeep) return next(new AppError(400, tooDeep, 'request', 'too_deep'));
          // Called by the parser, not by express: a throw here would not reach the error handler.
          try {
            req.body = reparsed(req);
          } catch (reparseError) {
            return next(reparseError);
          }
          return next();
        }
        const type = (error as { type?: string }).type;
        const encoding = contentEncodingOf(req);
        if (type === 'entity.too.large') {
          const inflated = encoding === 'identity' ? '' : ' once decompressed';
          return next(new AppError(413, `body is larger than ${limitText(limit)}${inflated}`, 'request', 'too_large'));
        }
        if (isZlibError(error) && encoding !== 'identity') {
          // zlib's own words ("incorrect header check", "unexpected end of file") say what is wrong.
          return next(new AppError(400, `body is not valid ${encoding} data (Content-Encoding: ${encoding}): ${error.message}`, 'request', 'corrupt_compression'));
        }
        if (type === 'entity.parse.failed') return next(new AppError(400, 'body is not valid JSON', 'request', 'malformed_json'));
        if (type === 'encoding.invalid') return next(new AppError(400, 'body is not valid UTF-8', 'request', 'invalid_utf8'));
        if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
          return next(new AppError(415, 'body must be UTF-8 JSON', 'request', 'unsupported_media_type'));
        }
        return next(error);
      });
    },
  ];
}
