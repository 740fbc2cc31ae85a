import type { NextFunction, Request, Response } from 'express';
import { dataExceptionOf, isUnavailableError } from '../db/errors.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { StoreUnavailableError } from '../eventstore/port.js';
import { IdempotencyConflictError, IdempotencyKeyInvalidError, ItemTooLargeError } from '../ingest/errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { routeOf } from './access-log.js';
import { StoreOutage } from './store-outage.js';

/** Seconds a client is asked to wait before retrying after a store failure: a restart or an election takes seconds. */
const storeRetryAfterSeconds = 1;

/**
 * The 503 of every store failure: StoreUnavailableError (whatever the event store failed with), or a
 * database connection error. The item may have been stored (docs/decisions.md, Replies).
 */
export const storeUnavailable = (
  message = 'the event store is unavailable; the item may or may not have been stored: retry with the same Idempotency-Key, which stores it once',
): AppError => new AppError(503, message, 'request', 'store_unavailable', { 'Retry-After': String(storeRetryAfterSeconds) });

/** The reply of a refusal of the ingest rules (src/ingest/errors.ts), or null for any other error. */
export function ingestRefusalReply(error: unknown): AppError | null {
  if (error instanceof ItemTooLargeError) return new AppError(413, error.message, 'request', 'too_large');
  if (error instanceof IdempotencyKeyInvalidError) return badRequest(error.message);
  if (error instanceof IdempotencyConflictError) return new AppError(422, error.message, 'request', 'idempotency_mismatch');
  return null;
}

export function sendError(res: Response, error: AppError): void {
  res.status(error.status).set(error.headers);
  if (error.form === 'item') res.json({ response: { status: 'error', message: error.message } });
  else res.json({ error: error.message, code: error.status });
}

/** Unknown paths: form A JSON, never express's HTML page. */
export function unknownPath(req: Request, _res: Response, next: NextFunction): void {
  next(notFound(`no such endpoint: ${req.method} ${req.path.replace(/\/accounts\/[^/]+/, '/accounts/:license')}`));
}

function clientErrorText(status: number, error: unknown): string {
  // express could not decode a path parameter: it is refused before the route knows its name.
  if (error instanceof URIError) return 'the path is not valid percent-encoded UTF-8';
  if (status === 413) return 'body too large';
  if (status === 415) return 'unsupported body encoding';
  return 'bad request: the request could not be read';
}

/**
 * Maps every error to a reply form of docs/decisions.md, Replies; the unexpected is logged and answered 500 without
 * details. Requests refused because the store is unavailable are logged by the app's StoreOutage.
 */
export function errorHandler(log: Logger, metrics?: Metrics) {
  const outage = new StoreOutage(log, metrics);
  return (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let appError: AppError;
    const status = (error as { status?: unknown; statusCode?: unknown } | null)?.status;
    const refusal = ingestRefusalReply(error);
    if (error instanceof AppError) appError = error;
    else if (refusal) appError = refusal;
    else if (typeof status === 'number' && status >= 400 && status < 500) {
      // A client error reported by express or body-parser (an undecodable path segment, a corrupt
      // compressed body, an aborted upload): its text may echo the request, so it is not repeated.
      req.log.debug({ status, type: (error as { type?: unknown }).type }, 'client error');
      appError = new AppError(status, clientErrorText(status, error), 'request', 'bad_request');
    } else if (error instanceof StoreUnavailableError || isUnavailableError(error)) {
      appError = storeUnavailable();
    } else if (dataExceptionOf(error)) {
      // A value of the request that slipped past its checks: the client's to change, not a fault of
      // the service's to retry. Warned (never PostgreSQL's message, which can quote the value).
      const sqlstate = dataExceptionOf(error);
      req.log.warn({ sqlstate, route: routeOf(req) }, 'the database refused a value of the request');
      appError = new AppError(400, `a value of the request cannot be taken by the database (SQLSTATE ${sqlstate})`, 'request', 'unstorable_value');
    } else {
      req.log.error({ err: error, route: req.route?.path }, 'unexpected error');
      appError = new AppError(500, 'internal error', 'request', 'internal');
    }
    if (appError.reason === 'store_unavailable') outage.refusedRequest(error, routeOf(req));
    res.locals.rejectReason = appError.reason;
    res.locals.rejectMessage = appError.message;
    res.locals.itemRejected = appError.form === 'item';
    if (res.headersSent) return;
    sendError(res, appError);
  };
}
