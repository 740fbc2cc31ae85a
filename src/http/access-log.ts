import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger.js';
import { routeLabel } from './route-label.js';

/**
 * A request id a client or proxy sent that can go into the log as it is: short, and made of the
 * characters of UUIDs, ULIDs and trace ids. Anything else (too long, control characters, spaces)
 * is replaced by an id of our own rather than logged.
 */
const acceptableRequestId = /^[\w.:=+/-]{1,128}$/;

export const requestIdHeader = 'X-Request-Id';

export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && acceptableRequestId.test(given) ? given : randomUUID();
}

/** The route pattern of a request, never its path: the path holds the license code. */
export function routeOf(req: IncomingMessage & { originalUrl?: string }): string {
  return routeLabel((req.originalUrl ?? req.url ?? '').split('?', 1)[0] ?? '');
}

declare module 'http' {
  interface IncomingMessage {
    /** The request's logger: its lines carry the request's `requestId`. */
    log: Logger;
  }
}

/**
 * Gives every request a logger (`req.log`) whose lines carry its `requestId`, echoes that id in the
 * reply's X-Request-Id header, and writes one access line per request, at debug level: at info, a
 * busy service would write a line per request and drown the lines that matter. The access line
 * holds method, route pattern, status and milliseconds: never the path, the query or the headers.
 * The request's child logger is made only when a route logs something: most requests never do, and
 * making one per request cost more than the rest of the access log (docs/performance.md).
 */
export function accessLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const requestId = requestIdOf(req);
    res.setHeader(requestIdHeader, requestId);
    let child: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, get: () => (child ??= log.child({ requestId })) });
    if (log.isLevelEnabled('debug')) {
      const started = Date.now();
      res.once('close', () => {
        const line: Record<string, unknown> = { requestId, method: req.method, route: routeOf(req), status: res.statusCode, ms: Date.now() - started };
        // The client went away before the whole reply was sent.
        if (!res.writableFinished) line.aborted = true;
        log.debug(line, 'request');
      });
    }
    next();
  };
}
