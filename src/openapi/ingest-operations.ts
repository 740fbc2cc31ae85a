import { bulkBytes, singleItemBytes } from '../http/body.js';
import { maxBulkItems } from '../http/ingest-routes.js';
import { rateLimitHeaders, replayed, responseRef } from './components.js';
import { schemaRef, type Json } from './json.js';
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

const ingestParameters = [{ $ref: '#/components/parameters/idempotencyKey' }];
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
    body: { schema: schemaRef(kind.schema), description: `One ${kind.name}, at most ${limitText(singleItemBytes)} (decompressed).`, examples: examplesOf(kind, (v) => v) },
    responses: {
      200: jsonReply('Stored: its trackID.', schemaRef('QueuedReply'), { ...rateLimitHeaders, ...replayed }),
      400: responseRef('InvalidItem'),
      422: responseRef('IdempotencyMismatch'),
      429: responseRef('RateLimited'),
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
      description: `1 to ${maxBulkItems} ${kind.name}s, at most ${limitText(bulkBytes)} (decompressed). An element may nest as deep as a single item.`,
      examples: { batch: { summary: `${kind.name}s`, value: Object.values(kind.examples) } },
    },
    responses: {
      200: jsonReply('One result per element, in order.', schemaRef('BulkReply'), { ...rateLimitHeaders, ...replayed }),
      400: responseRef('BadRequest'),
      422: responseRef('IdempotencyMismatch'),
      429: responseRef('RateLimited'),
    },
  };
}

export const ingestOperations: OperationDoc[] = kinds.flatMap((kind) => [single(kind), bulk(kind)]);
