import { sessionCookie } from '../http/auth.js';
import { bodyEncodings } from '../http/content-encoding.js';
import { browserIdempotencyWindowHours, idempotencyWindowHours } from '../ingest/idempotency.js';
import { preflightMaxAgeSeconds } from '../http/cors.js';
import { browserKeyPrefix } from '../config.js';
import { schemaRef, type JsonObject } from './json.js';

/** Security schemes, parameters, headers and error replies that the operations share. */

export const securitySchemes: JsonObject = {
  accessToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'An access token of the account whose license code is in the path: `Authorization: Bearer <token>`, or the token alone. ' +
      'Ingest takes either scope, from a server only: with an `Origin` header (a web page) 403, in the query string 401. ' +
      'The read API and token calls take scope `ingest+read` (scope `ingest`: 403).',
  },
  browserKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      `A browser key (\`${browserKeyPrefix}...\`) of the account whose license code is in the path, from a web page of one of the key's origins: \`Authorization: Bearer <key>\`, or the key alone. ` +
      'Ingest only; every other call refuses it (401). See docs/browser.md.',
  },
  browserKeyInQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'key',
    description: 'The same browser key in the query parameter `key`, for a page that cannot set headers (`navigator.sendBeacon`). Never an access token (401).',
  },
  writeKey: {
    type: 'http',
    scheme: 'basic',
    description:
      "A Segment write key as the user name of HTTP Basic (no password), as Segment's libraries send it: an access token of the account (from a server: with an `Origin` header 403) " +
      "or a browser key (from a page of one of the key's origins). Or, with no Authorization header, the same key as `writeKey` in the JSON body, as analytics-next sends it. See docs/segment.md.",
  },
  adminToken: { type: 'http', scheme: 'bearer', description: 'The service\'s `ADMIN_TOKEN`: `Authorization: Bearer <token>`.' },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: sessionCookie,
    description:
      'The dashboard session cookie (HttpOnly, SameSite=Strict, 12 hours) set by `POST /admin/v1/session`. A request that changes something with it ' +
      'must not carry an `Origin` header naming another host (403). A request with an `Authorization` header is judged by that header alone; a cookie never authenticates ingest.',
  },
};

const header = (description: string, schema: JsonObject = { type: 'string' }): JsonObject => ({ description, schema });

export const headers: JsonObject = {
  'RateLimit-Policy': header('The account\'s limit of the endpoint and its window: `<limit>;w=60`.', { type: 'string', examples: ['10000;w=60'] }),
  'RateLimit-Limit': header('Requests (or product events) the account may make in a window of 60 seconds.', { type: 'integer' }),
  'RateLimit-Remaining': header('Of those, what is left in the current window.', { type: 'integer', minimum: 0 }),
  'RateLimit-Reset': header('Seconds until the window ends.', { type: 'integer', minimum: 1 }),
  'Retry-After': header('Seconds to wait before trying again.', { type: 'integer', minimum: 1 }),
  'Idempotent-Replayed': header('`true` on the reply recorded for the first request with this Idempotency-Key, sent again: nothing new was stored.', { const: 'true' }),
  'Server-Timing': header('The service\'s own time for the request: `app;dur=<ms>`.', { type: 'string', examples: ['app;dur=3.2'] }),
  'Set-Cookie': header(`The session cookie \`${sessionCookie}\` (HttpOnly, SameSite=Strict, Path=/, Secure over HTTPS).`),
  Location: header('Where the resource is.'),
  'Access-Control-Allow-Origin': header(
    'The request\'s `Origin`, on every reply under /v1 to a request that has one (errors too), so that the page can read why it was refused. Never `Access-Control-Allow-Credentials`: a cookie never authenticates ingest.',
  ),
  'Access-Control-Expose-Headers': header(
    'With `Access-Control-Allow-Origin`: the headers a page may read: Retry-After, Idempotent-Replayed, X-Request-Id and the RateLimit headers.',
  ),
  Vary: header('`Origin`: a reply under /v1 depends on the request\'s `Origin`.'),
};

const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` });
export const rateLimitHeaders: JsonObject = Object.fromEntries(['RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'].map((name) => [name, headerRef(name)]));
export const retryAfter: JsonObject = { 'Retry-After': headerRef('Retry-After') };
export const replayed: JsonObject = { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') };
export const serverTiming: JsonObject = { 'Server-Timing': headerRef('Server-Timing') };
export const setCookie: JsonObject = { 'Set-Cookie': headerRef('Set-Cookie') };
/** The CORS headers of every reply under /v1 (src/http/cors.ts, docs/browser.md). */
export const corsHeaders: JsonObject = Object.fromEntries(['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers', 'Vary'].map((name) => [name, headerRef(name)]));

/** The headers of a preflight's 204 besides those of every /v1 reply (src/http/cors.ts). */
export const preflightHeaders: JsonObject = {
  'Access-Control-Allow-Methods': header('The methods of the ingest routes.', { const: 'POST' }),
  'Access-Control-Allow-Headers': header('The request headers a page may send: `authorization, content-type, content-encoding, idempotency-key, x-request-id`.'),
  'Access-Control-Max-Age': header('How long the browser may keep this answer, in seconds.', { const: String(preflightMaxAgeSeconds) }),
};

export const parameters: JsonObject = {
  license: { name: 'license', in: 'path', required: true, description: 'The account\'s license code.', schema: { type: 'string' } },
  idempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      `Makes a retry safe: within ${idempotencyWindowHours} hours (${browserIdempotencyWindowHours / 24} days for a request made with a browser key), a repeat with the same key and body gets the same reply (marked Idempotent-Replayed) and stores ` +
      'nothing new; the key with another body gets 422. Keys are per account and endpoint. An invalid item frees its key for a corrected request.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  idempotencyKeyInQuery: {
    name: 'idempotencyKey',
    in: 'query',
    required: false,
    description:
      'The Idempotency-Key as a query parameter, for a page that cannot set headers (`navigator.sendBeacon`); the same rules. Given once; with the header too, both the same (400 otherwise).',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  browserKey: {
    name: 'key',
    in: 'query',
    required: false,
    description:
      `A browser key (\`${browserKeyPrefix}...\`), for a page that cannot set headers (\`navigator.sendBeacon\`). Only a browser key may be in a URL: an access token here is refused (401) ` +
      'and should be rotated, since the URL may have been logged on its way. Given once, not empty; with an `Authorization` header too, both the same (400 otherwise).',
    schema: { type: 'string', pattern: `^${browserKeyPrefix}` },
  },
  origin: {
    name: 'Origin',
    in: 'header',
    required: false,
    description:
      'Set by the browser. With a browser key it must name one of the key\'s origins (403 otherwise, and without it); with an access token it must be absent, since an access token is secret and a web page ' +
      'shows it to anyone (403). Every reply to a request with an `Origin` carries the CORS headers.',
    schema: { type: 'string', examples: ['https://shop.example.com'] },
  },
  contentEncoding: {
    name: 'Content-Encoding',
    in: 'header',
    required: false,
    description:
      'The body may be sent compressed. The body limit is of the decompressed bytes (413 once passed); a body that cannot be decompressed gets 400 naming ' +
      'the problem; any other encoding, or a list of them, 415.',
    schema: { enum: [...bodyEncodings] },
  },
};

/** The `limit` query parameter of a list. */
export const limitParameter = (max: number, fallback: number): JsonObject => ({
  name: 'limit',
  in: 'query',
  required: false,
  description: `How many at most, 1 to ${max}; otherwise 400 naming \`limit\`.`,
  schema: { type: 'integer', minimum: 1, maximum: max, default: fallback },
});

const errorContent = { 'application/json': { schema: schemaRef('ErrorReply') } };
const errorReply = (description: string, more: JsonObject = {}): JsonObject => ({ description, content: errorContent, ...more });

/** The error replies, form A unless said otherwise, by the name operations refer to them with. */
export const responses: JsonObject = {
  BadRequest: errorReply('Malformed JSON, a body of the wrong shape, a body that is not UTF-8, nests deeper than 64 levels or cannot be decompressed, or an invalid parameter: the error names it.'),
  InvalidItem: {
    description: 'The item is invalid (form B, the message naming the field), or the request could not be read (form A). Nothing was stored.',
    content: { 'application/json': { schema: { oneOf: [schemaRef('ItemErrorReply'), schemaRef('ErrorReply')] } } },
  },
  Unauthorized: errorReply('Missing or wrong credentials (another account\'s token, an unknown license code, a browser key).'),
  IngestUnauthorized: errorReply(
    'Missing or wrong credentials (an unknown or revoked access token or browser key, another account\'s, an unknown license code), or an access token in the query parameter `key`. ' +
      'When the license code names an account, counted in its ingestion warnings.',
  ),
  OriginRefused: errorReply(
    'A browser key from an origin it does not allow (`origin <origin> is not allowed for this browser key`) or without an `Origin` header, or an access token sent with an `Origin` header ' +
      '(from a web page, where anyone can read it: use a browser key). Counted in the account\'s ingestion warnings. Nothing was stored.',
  ),
  Forbidden: errorReply('Known credentials that may not do this: a token of scope `ingest` reading, an account making operator calls, another account\'s session, a foreign Origin with a session cookie.'),
  NotFound: errorReply('No such resource (or path: every unknown path gets this form A 404).'),
  Conflict: errorReply('The change conflicts with the current state; nothing was changed.'),
  RequestTimeout: errorReply(
    'The request did not arrive in full within REQUEST_TIMEOUT_SECONDS, or its body brought fewer than MIN_BODY_RATE bytes a second (240) in some 5 s; the connection is closed and nothing was stored.',
  ),
  TooLarge: errorReply(
    'The body is over the limit (of its decompressed bytes, if compressed), an item holds more than 10,000 values or 1,000 objects and arrays (named by the message), or chunk extensions are too large; on an ingest endpoint with EventStoreDB, ' +
      'an item whose events are more than one write to the store may hold (1 MiB by default), named by the message. Nothing was stored.',
  ),
  UnsupportedMediaType: errorReply('Not `Content-Type: application/json` (on ingest, also `text/plain` holding JSON), a charset other than UTF-8, or a Content-Encoding other than gzip, deflate, br or identity.'),
  IdempotencyMismatch: errorReply(
    `This Idempotency-Key was used with another body within its window: ${idempotencyWindowHours} hours, or ${browserIdempotencyWindowHours / 24} days when its first request came with a browser key.`,
  ),
  RateLimited: errorReply(
    'Over the account\'s rate limit, or a browser key\'s (per client address, and per key across processes; these two send no RateLimit headers): retry after `Retry-After` seconds. Nothing was stored.',
    { headers: { ...retryAfter, ...rateLimitHeaders } },
  ),
  HeadersTooLarge: errorReply('The request headers are over 16 KiB.'),
  InternalError: errorReply('An unexpected error (logged by the service, no details here).'),
  Unavailable: errorReply(
    'The event store or database failed or cannot be reached: the item may or may not have been stored, and a retry with the same Idempotency-Key stores it once. Or the process holds as much request data as it may (nothing stored). Either way, retry after `Retry-After` seconds.',
    { headers: retryAfter },
  ),
};

/** A reference to one of `responses`. */
export const responseRef = (name: keyof typeof responses & string): JsonObject => ({ $ref: `#/components/responses/${name}` });
