import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../paths.js';
import { projections } from '../../projections/index.js';
import { accountOperations, projectionOperations, readOperations, sessionOperations } from './admin-operations.js';
import { browserKeyOperations, browserSchemas, sdkOperations } from './browser-operations.js';
import { corsHeaders, headers, parameters, responseRef, responses, securitySchemes } from './components.js';
import { erasureOperations, erasureSchemas } from './erasure-operations.js';
import { exportOperations, exportSchemas } from './export-operations.js';
import { ingestOperations } from './ingest-operations.js';
import { itemSchemas } from './item-schemas.js';
import type { JsonObject } from './json.js';
import type { Access, OperationDoc } from './operation.js';
import { productOperations, productSchemas } from './product-operations.js';
import { readSchemas } from './read-schemas.js';
import { replySchemas } from './reply-schemas.js';
import { segmentOperations } from './segment-operations.js';
import { serviceOperations } from './service-operations.js';
import { settingsOperations } from './settings-operations.js';

/**
 * The OpenAPI 3.1 document of the service: the item schemas of schemas/, the reply shapes, and an
 * operation per route of the express app. `npm run build` writes it to dist/openapi.json
 * (./write.ts), which GET /openapi.json serves.
 */

export const operations: readonly OperationDoc[] = [
  ...ingestOperations,
  ...segmentOperations,
  ...erasureOperations,
  ...sessionOperations,
  ...accountOperations,
  ...browserKeyOperations,
  ...settingsOperations,
  ...readOperations,
  ...productOperations,
  ...exportOperations,
  ...projectionOperations,
  ...serviceOperations,
  ...sdkOperations,
];

/** An express route pattern as an OpenAPI path: `:license` and `*splat` become `{license}` and `{splat}`. */
export const openApiPath = (pattern: string): string => pattern.replace(/[:*]([A-Za-z]+)/g, '{$1}');

const pathParameter = (name: string, description: string, schema: JsonObject = { type: 'string' }): JsonObject => ({ name, in: 'path', required: true, description, schema });

function pathParameterOf(name: string, path: string): JsonObject {
  switch (name) {
    case 'license':
      return { $ref: '#/components/parameters/license' };
    case 'id':
      if (path.includes('/tokens/')) return pathParameter('id', 'The id of the access token (from the token list).', { type: 'string', format: 'uuid' });
      if (path.includes('/erasures/')) return pathParameter('id', 'The id of the erasure.', { type: 'string', format: 'uuid' });
      if (path.includes('/browser-keys/')) return pathParameter('id', 'The id of the browser key (from the list).', { type: 'string', format: 'uuid' });
      return pathParameter('id', 'The userId or anonymousId of the lead.');
    case 'productId':
      return pathParameter('productId', 'The productId of the product, as sent.');
    case 'writeKey':
      return pathParameter('writeKey', 'A browser key of the account, as the Segment write key of analytics-next.');
    case 'trackID':
      return pathParameter('trackID', 'A trackID of an ingest reply.', { type: 'string', format: 'uuid' });
    case 'eventId':
      return pathParameter('eventId', 'The eventId of a stored event, as a list shows it.', { type: 'string', format: 'uuid' });
    case 'name':
      return pathParameter('name', 'The projection (`all` is the CLI\'s only: 404 here).', { enum: projections.map((p) => p.name) });
    case 'file':
      if (path.startsWith('/sdk/')) return pathParameter('file', '`tracking.mjs` (an ES module) or `tracking.js` (the script-tag build).', { type: 'string', enum: ['tracking.mjs', 'tracking.js'] });
      return pathParameter('file', 'A file name of the dashboard build.');
    case 'version':
      return pathParameter('version', '`v` and the version of the SDK served (`v0.1.0`), as the manifest\'s paths have it; another version: 404.', { type: 'string', pattern: '^v' });
    case 'splat':
      return pathParameter('splat', 'A dashboard page (`leads/u-42`): one or more path segments, slashes included.');
    default:
      throw new Error(`no description of the path parameter ${name} (${path})`);
  }
}

const securityOf: Record<Access, JsonObject[]> = {
  public: [],
  ingest: [{ accessToken: [] }, { browserKey: [] }, { browserKeyInQuery: [] }],
  writeKey: [{ writeKey: [] }],
  account: [{ accessToken: [] }, { adminToken: [] }, { session: [] }],
  operator: [{ adminToken: [] }, { session: [] }],
};

/** The errors every operation of its kind can get, besides those it lists itself. */
function commonErrors(operation: OperationDoc): Record<string, JsonObject> {
  const errors: Record<string, JsonObject> = {};
  if (operation.body) {
    Object.assign(errors, { 400: responseRef('BadRequest'), 408: responseRef('RequestTimeout'), 413: responseRef('TooLarge') });
    Object.assign(errors, { 415: responseRef('UnsupportedMediaType'), 431: responseRef('HeadersTooLarge') });
  }
  if (operation.access !== 'public') errors[401] = responseRef('Unauthorized');
  if (operation.access === 'account' || operation.access === 'operator') errors[403] = responseRef('Forbidden');
  // An operator naming a license code no account has; for a lead, track or token, one not found.
  if (operation.access === 'account') errors[404] = responseRef('NotFound');
  if (operation.parameters?.some((p) => p.in === 'query')) errors[400] = responseRef('BadRequest');
  errors[500] = responseRef('InternalError');
  if (operation.usesStore) errors[503] = responseRef('Unavailable');
  return errors;
}

const responsesAt = '#/components/responses/';
const addCors = (reply: JsonObject): JsonObject => ({ ...reply, headers: { ...((reply.headers as JsonObject | undefined) ?? {}), ...corsHeaders } });

/**
 * A reply of a path under /v1 with the CORS headers every such reply carries, errors too
 * (src/http/cors.ts): a shared reply `X` becomes `XCors`, its copy with them (the names are
 * gathered in `shared`, for the components).
 */
function withCors(reply: JsonObject, shared: Set<string>): JsonObject {
  const ref = reply.$ref;
  if (typeof ref !== 'string') return addCors(reply);
  const name = ref.slice(responsesAt.length);
  shared.add(name);
  return { $ref: `${responsesAt}${name}Cors` };
}

/** A JSON body, and with `textPlain` the same JSON as text (what a page's sendBeacon sends). */
function requestBody(body: NonNullable<OperationDoc['body']>): JsonObject {
  const media: JsonObject = { schema: body.schema };
  if (body.examples) media.examples = body.examples;
  const content: JsonObject = { 'application/json': media };
  if (body.textPlain) content['text/plain'] = { schema: { type: 'string', contentMediaType: 'application/json', contentSchema: body.schema } };
  return { required: body.optional !== true, description: body.description, content };
}

function operationObject(operation: OperationDoc, sharedCors: Set<string>): JsonObject {
  const names = [...operation.path.matchAll(/[:*]([A-Za-z]+)/g)].map((match) => match[1] as string);
  const all = { ...commonErrors(operation), ...operation.responses };
  const cors = operation.path.startsWith('/v1/');
  const object: JsonObject = {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    security: operation.security ?? securityOf[operation.access],
    parameters: [
      ...names.map((name) => pathParameterOf(name, operation.path)),
      ...(operation.parameters ?? []),
      // Every JSON body may come compressed (docs/api.md, Compressed bodies).
      ...(operation.body ? [{ $ref: '#/components/parameters/contentEncoding' }] : []),
    ],
    responses: Object.fromEntries(Object.keys(all).sort().map((status) => [status, cors ? withCors(all[status] as JsonObject, sharedCors) : (all[status] as JsonObject)])),
  };
  if (operation.description) object.description = operation.description;
  if (operation.body) object.requestBody = requestBody(operation.body);
  return object;
}

const tags: JsonObject[] = [
  { name: 'Ingest', description: 'Items posted by SDK clients (users, events, products, product events; singly or in bulk): each reply comes once the item is stored.' },
  { name: 'Segment', description: "Segment's tracking API, for the libraries teams already use (Segment's, RudderStack's, Jitsu's): each message is stored as the spec's items (docs/segment.md)." },
  { name: 'Erasure', description: "Erasing a person on request (GDPR art. 17, CCPA): their personal values become unreadable everywhere, with an audit trail; new items naming them may be refused." },
  { name: 'Sessions', description: "The dashboard's sign-in: an HttpOnly session cookie." },
  { name: 'Accounts', description: 'Operators: accounts and their first access token.' },
  { name: 'Access tokens', description: "An account's access tokens: up to 20 active, each with a label and a scope." },
  { name: 'Browser keys', description: "An account's browser keys: public credentials of web pages, bound to their origins, that only post items (docs/browser.md); up to 20 active." },
  { name: 'Read API', description: 'The read models: leads, their events and timeline, products and their events, the track lookup, live events, ingestion warnings, the overview.' },
  { name: 'Export', description: "An account's events out of the store, opened, for analysts and their warehouses: a streamed export (NDJSON, CSV) and a feed to load from (docs/export.md)." },
  { name: 'Projections', description: 'Operators: the projection workers that build the read models.' },
  { name: 'Operations', description: 'Health, metrics and this document.' },
  { name: 'Dashboard', description: 'The dashboard, a single-page app that calls the API above.' },
  { name: 'Browser SDK', description: 'The script a web page loads to send items with a browser key, served to any origin.' },
];

const overview = `Every reply is JSON unless said otherwise. An item is acknowledged only once it is stored.

Replies: an item stored is \`{ "response": { "status": "queued", "trackID" } }\`; a bulk request is answered 200 with one such result per element, a refused element being \`{ "status": "error", "message" }\`. An invalid single item gets 400 form B \`{ "response": { "status": "error", "message" } }\`, the message naming the field. Every other error is form A \`{ "error", "code" }\`: also an unknown path (404), a request the HTTP server cannot read (400), headers over 16 KiB (431), and a request not received in full in time (408).

Headers: \`Authorization\` (an access token, a browser key on ingest, or the admin token, \`Bearer\` optional); \`Idempotency-Key\` on ingest (or the query parameter \`idempotencyKey\`), answered with \`Idempotent-Replayed: true\` on a replay; \`Content-Encoding\` (gzip, deflate, br) on any JSON body; \`RateLimit-Policy\`, \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` on ingest replies while rate limits are on, and \`Retry-After\` on 429 and 503; \`Server-Timing: app;dur=<ms>\` on the read API's replies; the session cookie \`tracking_session\` of the dashboard.

Web pages (docs/browser.md): a page posts items with a browser key (\`tbk_...\`, in \`Authorization\` or the query parameter \`key\`) from one of the key's origins, never with an access token; every reply under /v1 to a request with an \`Origin\` carries \`Access-Control-Allow-Origin\` (that origin), \`Access-Control-Expose-Headers\` and \`Vary: Origin\`, errors included, and a preflight (\`OPTIONS\`) there is answered 204.`;

const version = (JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;

export function openApiDocument(): JsonObject {
  const paths: Record<string, JsonObject> = {};
  const sharedCors = new Set<string>();
  for (const operation of operations) {
    const path = (paths[openApiPath(operation.path)] ??= {});
    if (path[operation.method]) throw new Error(`${operation.method} ${operation.path} is described twice`);
    path[operation.method] = operationObject(operation, sharedCors);
  }
  const corsResponses = [...sharedCors].sort().map((name) => [`${name}Cors`, addCors(responses[name] as JsonObject)]);
  return {
    openapi: '3.1.1',
    info: { title: 'Tracking ingestion service', version, description: overview, license: { name: 'MIT', identifier: 'MIT' } },
    tags,
    paths,
    components: {
      schemas: { ...itemSchemas(), ...replySchemas, ...browserSchemas, ...readSchemas, ...productSchemas, ...erasureSchemas, ...exportSchemas },
      responses: { ...responses, ...Object.fromEntries(corsResponses) },
      parameters,
      headers,
      securitySchemes,
    },
  };
}
