import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { badRequest } from '../errors.js';
import { unstorableValue } from '../ingest/storable.js';
import { jsonBody } from './body.js';

/**
 * The parameters of the read and operator API (path parameters, query strings, JSON bodies) are
 * checked here, before any of them reaches PostgreSQL: text holding a NUL character or an unpaired
 * surrogate, which PostgreSQL refuses (or would store changed), gets 400 form A naming the
 * parameter. The rule is ingest's (src/ingest/storable.ts), so that what one part of the API refuses
 * the other does too.
 */
const unstorableText = (text: string): boolean => unstorableValue(text) !== null;

const problemOf = (kind: string, name: string): string =>
  `${kind} ${name} contains a NUL character or an unpaired surrogate, which the service cannot take`;

/** A path parameter's value: text, or the segments of a wildcard. */
function checkPathParam(_req: Request, _res: Response, next: NextFunction, value: unknown, name: string): void {
  const texts = Array.isArray(value) ? value : [value];
  if (texts.some((text) => typeof text === 'string' && unstorableText(text))) throw badRequest(problemOf('path parameter', name));
  next();
}

/** The names of the parameters in a route pattern of express 5: `:id`, `*splat`. */
const paramNamesOf = (path: string): string[] => [...path.matchAll(/[:*]([A-Za-z_$][\w$]*)/g)].map((m) => m[1] as string);

/** A router mounted in another: its layer's handle is the router itself. */
const isRouter = (handle: unknown): handle is Router =>
  typeof handle === 'function' && Array.isArray((handle as { stack?: unknown }).stack) && typeof (handle as { param?: unknown }).param === 'function';

/**
 * Checks every path parameter of every route of `router` and of the routers mounted in it, and of
 * the paths they are mounted on, whatever its name: routes added later are covered without a change
 * here. Called once the routes are
 * defined. (A segment that is not percent-encoded UTF-8 never reaches a parameter: express answers
 * 400 for it.)
 */
export function checkPathParams(router: Router): void {
  const names = new Set<string>();
  for (const layer of router.stack) {
    // A route's path, or the path a router or middleware is mounted on (`/v1/accounts/:license`).
    const paths: unknown[] = [layer.route?.path, (layer as { rawPath?: unknown }).rawPath];
    for (const pattern of paths.flat()) if (typeof pattern === 'string') for (const name of paramNamesOf(pattern)) names.add(name);
    if (isRouter(layer.handle)) checkPathParams(layer.handle);
  }
  for (const name of names) router.param(name, checkPathParam);
}

/** `value` decoded as a query string does (`+` is a space), or null when it is not percent-encoded UTF-8. */
function decodedQueryText(value: string): string | null {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** A query parameter given at most once, as text (checkQuery has refused unstorable text); undefined when absent. */
export function stringQuery(req: Request, name: string): string | undefined {
  const value = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest(`${name} must be given once, as text`);
  return value;
}

/** The `limit` of a read list: `fallback` when absent; 400 unless an integer from 1 to `max`. */
export function limitOf(req: Request, { fallback = 50, max = 500 } = {}): number {
  const raw = req.query.limit;
  if (raw === undefined) return fallback;
  const limit = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(limit) || limit < 1 || limit > max) {
    throw badRequest(`limit must be an integer from 1 to ${max}`);
  }
  return limit;
}

/** The `cursor` parameter decoded by `decode`: undefined when absent or empty; 400 when not one this API gave out. */
export function cursorOf<T>(req: Request, decode: (text: string) => T | null, name = 'cursor'): T | undefined {
  const text = stringQuery(req, name);
  if (text === undefined || text === '') return undefined;
  const cursor = decode(text);
  if (cursor === null) throw badRequest(`${name} is not one this API gave out`);
  return cursor;
}

/**
 * The query string, read from the request line: express's parser turns bytes that are not UTF-8
 * (`%ED%A0%80`, an encoded surrogate; `%FF`) into U+FFFD, and a changed value would be searched for.
 */
export function checkQuery(req: Request, _res: Response, next: NextFunction): void {
  const at = req.originalUrl.indexOf('?');
  if (at < 0) return next();
  for (const pair of req.originalUrl.slice(at + 1).split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const name = decodedQueryText(rawName);
    if (name === null || unstorableText(name)) throw badRequest('a query parameter name is not percent-encoded UTF-8 text without NUL characters');
    const value = decodedQueryText(eq < 0 ? '' : pair.slice(eq + 1));
    if (value === null) throw badRequest(`query parameter ${name} is not percent-encoded UTF-8`);
    if (unstorableText(value)) throw badRequest(problemOf('query parameter', name));
  }
  next();
}

/** Every string of a parsed JSON body, keys too, at any depth: the field named as ingest names one. */
function checkBody(req: Request, _res: Response, next: NextFunction): void {
  const problem = unstorableValue(req.body);
  if (problem) throw badRequest(problem);
  next();
}

/** A JSON body (src/http/body.ts) of the read and operator API, its strings checked as above. */
export const checkedJsonBody = (limit: number): RequestHandler[] => [...jsonBody(limit), checkBody];

/** Whether the request carries a body: a length above 0, or chunks. */
const hasBody = (req: Request): boolean => req.get('transfer-encoding') !== undefined || Number(req.get('content-length') ?? '0') > 0;

/**
 * A JSON body the call may go without: none (no length, or 0) reads as `{}`, with no Content-Type
 * needed; one sent is checked as `checkedJsonBody` checks it.
 */
export const optionalJsonBody = (limit: number): RequestHandler[] =>
  checkedJsonBody(limit).map((handler): RequestHandler => (req, res, next) => {
    if (hasBody(req)) return handler(req, res, next);
    req.body = {};
    next();
  });
