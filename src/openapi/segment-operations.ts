import { bulkBytes, singleItemBytes } from '../http/body.js';
import { maxBatchMessages } from '../http/segment-routes.js';
import { segmentTypes } from '../ingest/segment-messages.js';
import { rateLimitHeaders, responseRef } from './components.js';
import { schemaRef, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/**
 * Segment's tracking API (docs/segment.md): what Segment's libraries, and those of RudderStack and
 * Jitsu, post when pointed at this service. Messages are Segment's; each is stored as the spec's
 * items, by the spec's rules.
 */

const short: Record<string, string> = { identify: 'i', track: 't', page: 'p', screen: 's', group: 'g', alias: 'a' };

const message: JsonObject = {
  type: 'object',
  description:
    "A message of Segment's spec: `type` (in a batch), `userId` and/or `anonymousId` (alias: `userId` and `previousId`), `messageId` (its trackID is derived from it: a repeated message is stored once), " +
    '`timestamp` and `sentAt` (corrected for the device clock), `context` (campaign, userAgent, ip, library, page), and per call `traits`, `event` and `properties`, `name` and `category`, `groupId`. docs/segment.md has the mapping.',
  additionalProperties: true,
};

const examples = {
  identify: { userId: 'u-42', anonymousId: 'a-7', messageId: 'm-1', traits: { email: 'ann@example.com', firstName: 'Ann', plan: 'pro' } },
  track: { userId: 'u-42', messageId: 'm-2', event: 'Product Viewed', properties: { product_id: 'p-1', price: 12.5 }, timestamp: '2024-05-01T12:30:00Z' },
};

const replies = (single: boolean): Record<string, JsonObject> => ({
  200: single ? jsonReply('Stored: its trackID.', schemaRef('QueuedReply'), rateLimitHeaders) : jsonReply('One result per message, in order.', schemaRef('BulkReply'), rateLimitHeaders),
  ...(single && { 400: responseRef('InvalidItem') }),
  401: responseRef('IngestUnauthorized'),
  403: responseRef('OriginRefused'),
  429: responseRef('RateLimited'),
});

/** The paths of a batch: Segment's, analytics-next's short one, and where analytics-java and analytics-ruby send. */
const batchForms: Record<string, { id: string; summary: string }> = {
  '/v1/batch': { id: 'segment-batch', summary: "Segment's batch" },
  '/v1/b': { id: 'segment-batch-short', summary: "Segment's batch (analytics-next's short path)" },
  '/v1/import': { id: 'segment-import', summary: "Segment's batch (the import path of analytics-java and analytics-ruby)" },
};

const batch = (path: string): OperationDoc => ({
  method: 'post',
  path,
  operationId: batchForms[path]?.id ?? 'segment-batch',
  tag: 'Segment',
  summary: batchForms[path]?.summary ?? "Segment's batch",
  description: `1 to ${maxBatchMessages.toLocaleString('en')} messages of any type, each stored or refused on its own; the reply (200 once the body is read) has one result per message, in order. A refused message is shown in Warnings with the library that sent it.`,
  access: 'writeKey',
  usesStore: true,
  body: {
    schema: { type: 'object', required: ['batch'], properties: { batch: { type: 'array', minItems: 1, maxItems: maxBatchMessages, items: message }, sentAt: { type: 'string' }, writeKey: { type: 'string' }, context: { type: 'object' } } },
    description: `At most ${bulkBytes / (1024 * 1024)} MiB (decompressed); JSON or text/plain holding JSON. The batch's \`context\` is every message's that has none of its own.`,
    examples: { batch: { summary: 'an identify and a track', value: { batch: [{ type: 'identify', ...examples.identify }, { type: 'track', ...examples.track }], sentAt: '2024-05-01T12:30:01Z' } } },
    textPlain: true,
  },
  responses: replies(false),
});

const call = (type: string, path: string): OperationDoc => ({
  method: 'post',
  path,
  operationId: path === `/v1/${type}` ? `segment-${type}` : `segment-${type}-short`,
  tag: 'Segment',
  summary: path === `/v1/${type}` ? `Segment's ${type}` : `Segment's ${type} (analytics-next's short path)`,
  description: `One ${type} message; refused by the spec's rules: 400 (form B), which Segment's libraries do not retry.`,
  access: 'writeKey',
  usesStore: true,
  body: {
    schema: message,
    description: `At most ${singleItemBytes / (1024 * 1024)} MiB (decompressed); JSON or text/plain holding JSON.`,
    ...(type in examples && { examples: { [type]: { summary: type, value: examples[type as keyof typeof examples] } } }),
    textPlain: true,
  },
  responses: replies(true),
});

const settings: OperationDoc = {
  method: 'get',
  path: '/v1/projects/:writeKey/settings',
  operationId: 'segment-browser-settings',
  tag: 'Segment',
  summary: 'Settings of a Segment browser library',
  description:
    "What analytics-next loads from its `cdnURL` before it sends anything: where to send (this service's /v1) and nothing else to load. For a browser key only (404 otherwise); an access token in this URL is refused (401), and must be rotated.",
  access: 'public',
  usesStore: false,
  responses: {
    200: jsonReply('The settings document.', { type: 'object', required: ['integrations'], properties: { integrations: { type: 'object' } } }),
    401: responseRef('IngestUnauthorized'),
    404: responseRef('NotFound'),
  },
};

export const segmentOperations: OperationDoc[] = [
  batch('/v1/batch'),
  batch('/v1/b'),
  batch('/v1/import'),
  ...segmentTypes.flatMap((type) => [call(type, `/v1/${type}`), call(type, `/v1/${short[type]}`)]),
  settings,
];
