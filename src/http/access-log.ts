import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp, type HttpLogger } from 'pino-http';
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

function accessLine(req: IncomingMessage, res: ServerResponse, fields: { ms?: unknown }) {
  const line: Record<string, unknown> = { method: req.method, route: routeOf(req), status: res.statusCode, ms: fields.ms };
  // The client went away before the whole reply was sent.
  if (!res.writableFinished) line.aborted = true;
  return line;
}

/**
 * Gives every request a logger (`req.log`) whose lines carry its `requestId`, echoes that id in the
 * reply's X-Request-Id header, and writes one access line per request, at debug level: at info, a
 * busy service would write a line per request and drown the lines that matter. The access line
 * holds method, route pattern, status and milliseconds: never the path, the query or the headers.
 */
export function accessLog(log: Logger): HttpLogger {
  return pinoHttp({
    logger: log,
    quietReqLogger: true,
    quietResLogger: true,
    customAttributeKeys: { reqId: 'requestId', responseTime: 'ms' },
    genReqId: (req, res) => {
      const id = requestIdOf(req);
      res.setHeader(requestIdHeader, id);
      return id;
    },
    customLogLevel: () => 'debug',
    customSuccessMessage: () => 'request',
    customErrorMessage: () => 'request',
    customSuccessObject: (req, res, fields: { ms?: unknown }) => accessLine(req, res, fields),
    // A 5xx is logged by the error handler with its cause; the access line stays the same shape.
    customErrorObject: (req, res, _error, fields: { ms?: unknown }) => accessLine(req, res, fields),
  });
}
