import type { NextFunction, Request, Response } from 'express';

/** Headers of a reply a page may read (docs/browser.md, Cross-origin requests). */
const exposedHeaders = 'Retry-After, Idempotent-Replayed, X-Request-Id, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy';
const allowedHeaders = 'authorization, content-type, content-encoding, idempotency-key, x-request-id';
/** Chromium caches a preflight at most this long (Firefox a day). */
export const preflightMaxAgeSeconds = 7200;

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
      'Access-Control-Allow-Headers': allowedHeaders,
      'Access-Control-Max-Age': String(preflightMaxAgeSeconds),
    })
    .end();
}
