import type { Request } from 'express';

/**
 * The Content-Encodings a JSON body may come in: they are inflated as the body is read, and the
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
