import { bulkBytes, singleItemBytes } from '../http/body.js';
import { maxBulkItems } from '../http/ingest-routes.js';
import { preflightHeaders, rateLimitHeaders, replayed, responseRef } from './components.js';
import { schemaRef, type Json, type JsonObject } from './json.js';
import { jsonReply, type Example, type OperationDoc } from './operation.js';

/**
 * The ingest endpoints (docs/spec.md 4) under /v1/accounts/:license, single and bulk; their replies
 * are those of docs/decisions.md, Replies.
 */

interface Kind {
  endpoint: 'users' | 'events' | 'products' | 'productsevents';
  schema: string;
  /** What one item is called. */
  name: string;
  summary: string;
  description: string;
  examples: Record<string, Json>;
}

const kinds: Kind[] = [
  {
    endpoint: 'users',
    schema: 'User',
    name: 'user profile',
    summary: 'Send a user profile',
    description:
      'A profile with a `userId`, an `anonymousId` or both (both: the anonymous profile is merged into the known user). System attributes (`email`, `phone`, `opt_in_sms`, ...) at the top ' +
      'level, custom ones in `attributes` (string, number, boolean; a string in date-time form is a datetime); a custom attribute keeps the type it was first sent with.',
    examples: {
      known: { userId: 'u-42', firstName: 'Ann', email: 'ann@example.com', opt_in_sms: false, attributes: { membership_level: 'gold', last_login: '2024-05-01T10:00:00Z' } },
      anonymous: { anonymousId: 'a-7', attributes: { landing_page: '/pricing' } },
      merge: { userId: 'u-42', anonymousId: 'a-7', attributes: {} },
    },
  },
  {
    endpoint: 'events',
    schema: 'Event',
    name: 'event',
    summary: 'Track an event of a user',
    description: 'An event of a known user (`userId`) or an anonymous one (`anonymousId`); `eventTime` defaults to when it was received.',
    examples: {
      signup: { userId: 'u-42', eventName: 'signup', eventTime: '2024-05-01T12:30:00+0200', eventData: { plan: 'pro' } },
      anonymous: { anonymousId: 'a-7', eventName: 'page_view', eventData: { path: '/pricing' } },
    },
  },
  {
    endpoint: 'products',
    schema: 'Product',
    name: 'product',
    summary: 'Send a product',
    description: 'A product and its properties, optionally for a user.',
    examples: { product: { productId: 'p-1', properties: { name: 'Blue mug', price: 12.5 } }, forUser: { productId: 'p-2', userId: 'u-42', properties: {} } },
  },
  {
    endpoint: 'productsevents',
    schema: 'ProductEvent',
    name: 'product event',
    summary: 'Track an event of a product',
    description:
      'An event of a product, with a user or `null`. Limited to PRODUCTSEVENTS_RATE_LIMIT (10,000) product events per minute per account, across processes.',
    examples: {
      view: { productId: 'p-1', userId: 'u-42', eventName: 'view', eventData: { page: 2 } },
      anonymous: { productId: 'p-1', userId: null, eventName: 'add_to_cart', eventTime: '2024-05-01T12:31:00Z', eventData: { quantity: 1 } },
    },
  },
];

const limitText = (bytes: number): string => `${bytes / (1024 * 1024)} MiB`;

const examplesOf = (kind: Kind, wrap: (value: Json) => Json): Record<string, Example> =>
  Object.fromEntries(Object.entries(kind.examples).map(([name, value]) => [name, { summary: `${kind.name}: ${name}`, value: wrap(value) }]));

const parameterRef = (name: string): JsonObject => ({ $ref: `#/components/parameters/${name}` });
const ingestParameters = ['browserKey', 'idempotencyKey', 'idempotencyKeyInQuery', 'origin'].map(parameterRef);
/** How a body may come: what a page's sendBeacon and a fetch without a preflight send, too. */
const bodyForms = 'As `application/json`, or as `text/plain` holding the same JSON (no preflight: what `navigator.sendBeacon` sends).';
/** The refusals of the credentials and origin (src/http/ingest-auth.ts), and of the limits. */
const refusals: Record<string, JsonObject> = {
  401: responseRef('IngestUnauthorized'),
  403: responseRef('OriginRefused'),
  422: responseRef('IdempotencyMismatch'),
  429: responseRef('RateLimited'),
};
const rateLimited = (kind: Kind): string =>
  kind.endpoint === 'productsevents' ? 'PRODUCTSEVENTS_RATE_LIMIT' : 'INGEST_RATE_LIMIT (per process and endpoint)';

function single(kind: Kind): OperationDoc {
  return {
    method: 'post',
    path: `/v1/accounts/:license/${kind.endpoint}`,
    operationId: `post-${kind.endpoint}`,
    tag: 'Ingest',
    summary: kind.summary,
    description: `${kind.description} The reply comes once the item is stored.`,
    access: 'ingest',
    usesStore: true,
    parameters: ingestParameters,
    body: {
      schema: schemaRef(kind.schema),
      description: `One ${kind.name}, at most ${limitText(singleItemBytes)} (decompressed). ${bodyForms}`,
      examples: examplesOf(kind, (v) => v),
      textPlain: true,
    },
    responses: {
      200: jsonReply('Stored: its trackID.', schemaRef('QueuedReply'), { ...rateLimitHeaders, ...replayed }),
      400: responseRef('InvalidItem'),
      ...refusals,
    },
  };
}

function bulk(kind: Kind): OperationDoc {
  const perItem = kind.endpoint === 'productsevents';
  return {
    method: 'post',
    path: `/v1/accounts/:license/${kind.endpoint}/bulk`,
    operationId: `post-${kind.endpoint}-bulk`,
    tag: 'Ingest',
    summary: `${kind.summary}s, 1 to ${maxBulkItems} at once`,
    description:
      `An array of 1 to ${maxBulkItems} ${kind.name}s, each checked and stored on its own: the reply (always 200 once the array is read) has one result per element, ` +
      `in order. ${perItem ? 'Each element counts against the product-event limit: a request over the remaining allowance is refused whole (429), storing nothing.' : `Counted against ${rateLimited(kind)} as one request.`}`,
    access: 'ingest',
    usesStore: true,
    parameters: ingestParameters,
    body: {
      schema: { type: 'array', minItems: 1, maxItems: maxBulkItems, items: schemaRef(kind.schema) },
      description: `1 to ${maxBulkItems} ${kind.name}s, at most ${limitText(bulkBytes)} (decompressed). An element may nest as deep as a single item. ${bodyForms}`,
      examples: { batch: { summary: `${kind.name}s`, value: Object.values(kind.examples) } },
      textPlain: true,
    },
    responses: {
      200: jsonReply('One result per element, in order.', schemaRef('BulkReply'), { ...rateLimitHeaders, ...replayed }),
      400: responseRef('BadRequest'),
      ...refusals,
    },
  };
}

const requestHeader = (name: string, description: string, required: boolean): JsonObject => ({ name, in: 'header', required, description, schema: { type: 'string' } });

/**
 * The CORS preflight of an ingest path (src/http/cors.ts): answered before any route, with no
 * query, for every origin; the request itself is judged by its key and origin.
 */
function preflight(operation: OperationDoc): OperationDoc {
  return {
    method: 'options',
    path: operation.path,
    operationId: `preflight-${operation.operationId.replace(/^post-/, '')}`,
    tag: 'Ingest',
    summary: 'CORS preflight',
    description:
      'What a browser asks before a cross-origin POST it may not send unasked (with an `Authorization` or `Idempotency-Key` header, or `Content-Type: application/json`): answered 204 at once, with no database ' +
      'round trip, for every origin; the browser keeps the answer for the time of `Access-Control-Max-Age`. The POST itself is judged by its key and origin, and its refusal is readable by the page. ' +
      'Every path under /v1 answers a preflight alike. A page that sends `text/plain` with the key in the query string needs none (the browser SDK does so).',
    access: 'public',
    usesStore: false,
    parameters: [
      requestHeader('Origin', "The page's origin, set by the browser.", true),
      requestHeader('Access-Control-Request-Method', 'The method of the request to come, set by the browser: `POST`.', true),
      requestHeader('Access-Control-Request-Headers', 'The headers it will send, set by the browser.', false),
    ],
    responses: { 204: { description: 'The request may be sent.', headers: preflightHeaders } },
  };
}

const posts = kinds.flatMap((kind) => [single(kind), bulk(kind)]);
export const ingestOperations: OperationDoc[] = [...posts, ...posts.map(preflight)];
