import { maxActiveBrowserKeys } from '../accounts/browser-keys.js';
import { browserKeyPrefix } from '../config.js';
import { maxOriginsPerKey } from '../accounts/origins.js';
import { takingAdminToken } from './admin-operations.js';
import { responseRef } from './components.js';
import { closedObject, orNull, schemaRef, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/** Browser keys and the browser SDK (docs/browser.md): their calls and the shapes of their bodies. */

const text = { type: 'string' };
const instant = { type: 'string', format: 'date-time' };
const keyId = { type: 'string', format: 'uuid' };
const label = { type: 'string', minLength: 1, maxLength: 100, description: 'Trimmed; no control characters.' };
const origin: JsonObject = {
  type: 'string',
  maxLength: 300,
  description:
    '`http` or `https`, a host and an optional port, nothing else (no path, query or user); `*.` before a host of at least two labels allows its subdomains ' +
    '(`https://*.example.com` matches `https://a.example.com` and `https://a.b.example.com`, never `https://example.com`).',
  examples: ['https://shop.example.com', 'https://*.example.com', 'http://localhost:5173'],
};
const origins = (description: string): JsonObject => ({ type: 'array', minItems: 1, maxItems: maxOriginsPerKey, items: origin, description });
const storedOrigins = origins('As stored: lowercased, without a default port or a trailing slash, each once.');
const writtenOrigins = origins(`1 to ${maxOriginsPerKey} origins; stored normalized (lowercased, without a default port or a trailing slash, each once).`);

const browserKeyFields = { id: keyId, label: text, origins: storedOrigins, createdAt: instant };

export const browserSchemas: Record<string, JsonObject> = {
  BrowserKey: closedObject(
    { ...browserKeyFields, lastUsedAt: orNull('string', { format: 'date-time', description: 'To the minute.' }) },
    { description: 'A browser key as listed: never the key itself.' },
  ),
  CreatedBrowserKey: closedObject({
    ...browserKeyFields,
    lastUsedAt: { type: 'null' },
    browserKey: { type: 'string', pattern: `^${browserKeyPrefix}[A-Za-z0-9_-]{32}$`, description: 'Shown this once: only its SHA-256 is kept.' },
  }),
  BrowserKeyList: closedObject({ browserKeys: { type: 'array', items: schemaRef('BrowserKey'), description: 'The active ones, oldest first.' } }),
  NewBrowserKey: closedObject({ label, origins: writtenOrigins }),
  BrowserKeyChange: {
    type: 'object',
    minProperties: 1,
    properties: { label, origins: writtenOrigins },
    additionalProperties: false,
    description: 'What to change: the label, the origins (all of them, replacing those the key had), or both.',
  },
  SdkManifest: closedObject({
    version: { type: 'string', description: 'The version of the browser SDK this service serves.', examples: ['0.1.0'] },
    files: {
      type: 'array',
      items: closedObject({
        name: { type: 'string', enum: ['tracking.mjs', 'tracking.js'], description: '`tracking.mjs`: an ES module; `tracking.js`: the script-tag build, which defines `window.Tracking`.' },
        path: { type: 'string', description: 'Its pinned path (`/sdk/v<version>-<build>/<name>`, the build named by the files\' bytes), cached for a year.', examples: ['/sdk/v0.1.0-3f9c2a7d81e0/tracking.js'] },
        bytes: { type: 'integer', minimum: 1 },
        gzipBytes: { type: 'integer', minimum: 1, description: 'Its size compressed with gzip (level 9).' },
        integrity: { type: 'string', pattern: '^sha384-[A-Za-z0-9+/]{64}$', description: 'What a page\'s `integrity` attribute holds.' },
      }),
    },
  }),
};

const keys = '/admin/v1/accounts/:license/browser-keys';
const bodyText = 'JSON of at most 32 KB.';
const shop = { label: 'web shop', origins: ['https://shop.example.com', 'https://*.shop.example.com'] };

export const browserKeyOperations: OperationDoc[] = takingAdminToken([
  {
    method: 'get',
    path: keys,
    operationId: 'list-browser-keys',
    tag: 'Browser keys',
    summary: "The account's active browser keys",
    access: 'account',
    usesStore: true,
    responses: { 200: jsonReply('Oldest first; never the keys themselves.', schemaRef('BrowserKeyList')) },
  },
  {
    method: 'post',
    path: keys,
    operationId: 'create-browser-key',
    tag: 'Browser keys',
    summary: 'Make a browser key',
    description:
      `A key for web pages of the origins given: it posts items only, from those origins only. An account holds up to ${maxActiveBrowserKeys} active browser keys (409 past that). ` +
      'In effect at once in this process, within 2 seconds in the others. An invalid `label` or origin: 400 naming it.',
    access: 'account',
    usesStore: true,
    body: { schema: schemaRef('NewBrowserKey'), description: bodyText, examples: { shop: { summary: 'A shop and its subdomains', value: shop } } },
    responses: { 201: jsonReply('Made; the key is shown this once.', schemaRef('CreatedBrowserKey')), 409: responseRef('Conflict') },
  },
  {
    method: 'patch',
    path: `${keys}/:id`,
    operationId: 'change-browser-key',
    tag: 'Browser keys',
    summary: "Change a browser key's label or origins",
    description: "The key stays the same. In effect at once in this process, within 2 seconds in the others. Unknown, revoked or another account's: 404.",
    access: 'account',
    usesStore: true,
    body: {
      schema: schemaRef('BrowserKeyChange'),
      description: bodyText,
      examples: { origins: { summary: 'New origins', value: { origins: ['https://shop.example.com', 'http://localhost:5173'] } } },
    },
    responses: { 200: jsonReply('Changed: the key as it is now.', schemaRef('BrowserKey')) },
  },
  {
    method: 'delete',
    path: `${keys}/:id`,
    operationId: 'revoke-browser-key',
    tag: 'Browser keys',
    summary: 'Revoke a browser key',
    description: "Refused at once in this process, within 2 seconds in the others. Unknown, already revoked or another account's: 404.",
    access: 'account',
    usesStore: true,
    responses: { 204: { description: 'Revoked.' } },
  },
]);

const header = (description: string, schema: JsonObject = { type: 'string' }): JsonObject => ({ description, schema });
/** Any page may load the SDK, also with `integrity` (which needs CORS) and under a strict COEP. */
const sdkHeaders = (cacheControl: string): JsonObject => ({
  'Cache-Control': header('How long it may be kept.', { const: cacheControl }),
  'Access-Control-Allow-Origin': header('Any page may read it.', { const: '*' }),
  'Cross-Origin-Resource-Policy': header('Any page may load it.', { const: 'cross-origin' }),
});
const script = (description: string, cacheControl: string): JsonObject => ({
  description,
  headers: { ...sdkHeaders(cacheControl), ETag: header('The file\'s integrity, quoted.') },
  content: { 'text/javascript': { schema: { type: 'string' } } },
});
const notBuilt: JsonObject = { description: 'The browser SDK is not built: run `npm run build`.', content: { 'application/json': { schema: schemaRef('ErrorReply') } } };
const noSuchFile: JsonObject = { description: 'No such file (`tracking.mjs` and `tracking.js` are), or another version than the one served.', content: { 'application/json': { schema: schemaRef('ErrorReply') } } };
const current = 'public, max-age=300';

export const sdkOperations: OperationDoc[] = [
  {
    method: 'get',
    path: '/sdk/manifest.json',
    operationId: 'sdk-manifest',
    tag: 'Browser SDK',
    summary: 'The files of the browser SDK',
    description: 'The version served, and per file its pinned path, sizes and `integrity` (for `<script integrity="..." crossorigin="anonymous">`).',
    access: 'public',
    usesStore: false,
    responses: { 200: jsonReply('The manifest.', schemaRef('SdkManifest'), sdkHeaders(current)), 503: notBuilt },
  },
  {
    method: 'get',
    path: '/sdk/:file',
    operationId: 'sdk-file',
    tag: 'Browser SDK',
    summary: 'The browser SDK, its current version',
    description: 'Follows the service\'s version: cached 5 minutes, revalidated by its ETag. A page that loads it with `integrity` takes the pinned path of the manifest.',
    access: 'public',
    usesStore: false,
    parameters: [{ name: 'If-None-Match', in: 'header', required: false, description: 'The ETag of a copy held: 304 while it is current.', schema: { type: 'string' } }],
    responses: {
      200: script('The file.', current),
      304: { description: 'The copy held is current.', headers: sdkHeaders(current) },
      404: noSuchFile,
      503: notBuilt,
    },
  },
  {
    method: 'get',
    path: '/sdk/:version/:file',
    operationId: 'sdk-pinned-file',
    tag: 'Browser SDK',
    summary: 'The browser SDK, pinned to its version',
    description: 'Never changes: cached for a year (`immutable`), for a page that loads it with `integrity`.',
    access: 'public',
    usesStore: false,
    responses: { 200: script('The file.', 'public, max-age=31536000, immutable'), 404: noSuchFile, 503: notBuilt },
  },
];
