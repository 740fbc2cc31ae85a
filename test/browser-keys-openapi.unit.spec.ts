import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { expect } from 'chai';
import { browserKeyFields } from '../src/accounts/browser-keys.js';
import { openApiDocument } from '../src/openapi/document.js';
import type { JsonObject } from '../src/openapi/json.js';

/**
 * What the OpenAPI document says of browser keys and of pages (docs/browser.md), against the code:
 * the body schemas of the key calls take the shapes browserKeyFields takes, and every reply under
 * /v1 names its CORS headers. test/openapi.e2e.spec.ts holds the service's replies against it.
 */

type Paths = Record<string, Record<string, JsonObject>>;
const document = openApiDocument();
const paths = document.paths as Paths;
const components = document.components as Record<string, Record<string, JsonObject>>;

/** A response object, its reference to a shared one followed. */
function resolved(reply: JsonObject): JsonObject {
  const ref = reply.$ref;
  if (typeof ref !== 'string') return reply;
  const [, section = '', name = ''] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
  return components[section]?.[name] as JsonObject;
}

const site = 'https://shop.example.com';

describe('OpenAPI document of browser keys and pages (unit)', () => {
  const ajv = new Ajv2020({ strict: false });
  // CommonJS: under NodeNext its plugin is the `default` of the module object.
  ajvFormats.default(ajv);
  ajv.addSchema(document as object, 'openapi.json');
  const accepts = (schema: string, body: unknown): boolean => ajv.validate({ $ref: `openapi.json#/components/schemas/${schema}` }, body);

  it('describes the bodies of making and changing a key as browserKeyFields takes them', () => {
    const bodies: unknown[] = [
      { label: 'shop', origins: [site] },
      { label: 'shop', origins: [site, 'https://*.example.org', 'http://localhost:5173'] },
      { label: 'shop' },
      { origins: [site] },
      {},
      { label: 'shop', origins: [] },
      { label: 'shop', origins: site },
      { label: '', origins: [site] },
      { label: 'x'.repeat(101), origins: [site] },
      { label: 7, origins: [site] },
      { label: 'shop', origins: [7] },
      { label: 'shop', origins: Array.from({ length: 51 }, (_, i) => `https://s${i}.example.com`) },
      { label: 'shop', origins: [site], scope: 'ingest' },
      [],
      'shop',
    ];
    for (const body of bodies) {
      const shown = JSON.stringify(body).slice(0, 80);
      expect(accepts('NewBrowserKey', body), `NewBrowserKey ${shown}`).to.equal(!('problem' in browserKeyFields(body, true)));
      expect(accepts('BrowserKeyChange', body), `BrowserKeyChange ${shown}`).to.equal(!('problem' in browserKeyFields(body, false)));
    }
  });

  it('names the CORS headers on every reply under /v1, errors and preflights too, and on no other path', () => {
    let replies = 0;
    for (const [path, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, reply] of Object.entries(operation.responses as Record<string, JsonObject>)) {
          const named = Object.keys((resolved(reply).headers as JsonObject | undefined) ?? {});
          const cors = ['Access-Control-Allow-Origin', 'Access-Control-Expose-Headers', 'Vary'];
          if (path.startsWith('/v1/')) {
            expect(named, `${method} ${path} ${status}`).to.include.members(cors);
            replies += 1;
          } else if (!path.startsWith('/sdk/')) {
            expect(named, `${method} ${path} ${status}`).not.to.include.members(cors);
          }
        }
      }
    }
    expect(replies).to.be.above(100);
  });

  it('gives each ingest path its preflight, and each ingest POST the key and idempotencyKey query parameters and a text/plain body', () => {
    const ingest = Object.entries(paths).filter(([path]) => /^\/v1\/accounts\/\{license\}\/(users|events|products|productsevents)(\/bulk)?$/.test(path));
    expect(ingest).to.have.length(8);
    for (const [path, item] of ingest) {
      const preflight = item.options as JsonObject;
      expect(Object.keys((preflight.responses as JsonObject)['204'] as JsonObject), path).to.include('headers');
      const post = item.post as JsonObject;
      const query = (post.parameters as JsonObject[]).map(resolved).filter((p) => p.in === 'query');
      expect(query.map((p) => p.name), path).to.deep.equal(['key', 'idempotencyKey']);
      const content = (post.requestBody as { content: Record<string, { schema: JsonObject }> }).content;
      expect(Object.keys(content), path).to.deep.equal(['application/json', 'text/plain']);
      expect(content['text/plain']?.schema.contentSchema, path).to.deep.equal(content['application/json']?.schema);
      expect(Object.keys(post.responses as JsonObject), path).to.include.members(['401', '403', '429']);
      expect(post.security, path).to.deep.include({ browserKeyInQuery: [] });
    }
    // The operations of accounts take no browser key: their security names none.
    const keyCalls = paths['/admin/v1/accounts/{license}/browser-keys/{id}'] as Record<string, JsonObject>;
    expect(Object.keys(keyCalls).sort()).to.deep.equal(['delete', 'patch']);
    expect(JSON.stringify(keyCalls.patch?.security)).not.to.contain('browserKey');
  });
});
