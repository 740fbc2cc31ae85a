import type { NextFunction, Request, Response } from 'express';

/** Headers of a reply a page may read (docs/browser.md, Cross-origin requests). */
const exposedHeaders = 'Retry-After, Idempotent-Replayed, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy';
const allowedHeaders = 'authorization, content-type, content-encoding, idempotency-key, x-request-id';
/** Chromium caches a preflight at most this long (Firefox a day). */
export const preflightMaxAgeSeconds = 7200;

/**
 * The headers a preflight of Segment's paths (docs/segment.md) allows: those the browser asks for,
 * when they are header names. Libraries that speak Segment's format send headers of their own
 * (RudderStack's `AnonymousId`), and none of them can authenticate: the write key is judged by
 * the request, and no credentials are allowed.
 */
function segmentHeaders(req: Request): string {
  const asked = req.get('access-control-request-headers') ?? '';
  return asked.length <= 1000 && /^[A-Za-z0-9!#$%&'*+.^_`|~-]+(\s*,\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$/.test(asked.trim()) ? asked.trim() : allowedHeaders;
}

/**
 * CORS for the ingest API (/v1): every reply, errors included, lets the page that asked read it, so
 * that a refusal shows the page its reason rather than an opaque network error. Whether a request
 * is allowed is the request's own check (its key and origin, src/http/ingest-auth.ts): the
 * preflight lets every origin through, answered here with no query, and cached by the browser for
 * two hours. No credentials: a cookie never authenticates ingest, and a reply made with the
 * visitor's cookies stays unreadable to the page.
 */
export function ingestCors(req: Request, res: Response, next: NextFunction): void {
  const origin = req.get('origin');
  res.vary('Origin');
  if (origin === undefined) return next();
  res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Expose-Headers': exposedHeaders });
  if (req.method !== 'OPTIONS' || req.get('access-control-request-method') === undefined) return next();
  res
    .status(204)
    .set({
      'Access-Control-Allow-Methods': 'POST',
      'Access-Control-Allow-Headers': req.path.startsWith('/accounts/') ? allowedHeaders : segmentHeaders(req),
      'Access-Control-Max-Age': String(preflightMaxAgeSeconds),
    })
    .end();
}
