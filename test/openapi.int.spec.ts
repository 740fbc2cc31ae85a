import { readFileSync } from 'node:fs';
import { compileErrors, validate } from '@readme/openapi-parser';
import { expect } from 'chai';
import { createApp } from '../src/http/app.js';
import { routePatterns } from '../src/http/route-label.js';
import { Validator, type SchemaName } from '../src/ingest/validation.js';
import { openApiDocument, openApiPath, operations } from '../src/openapi/document.js';
import type { JsonObject } from '../src/openapi/json.js';
import { openApiDocumentPath } from '../src/paths.js';
import { TestApp } from './support/app.js';
import { expressRoutes } from './support/express-routes.js';

/** The OpenAPI document (src/openapi) against the express app, the validator and the item schemas. */

type Paths = Record<string, Record<string, JsonObject>>;
const methods = ['get', 'post', 'put', 'patch', 'delete'];

/** `METHOD /path` of every operation of a document. */
function documented(document: JsonObject): string[] {
  const paths = document.paths as Paths;
  return Object.entries(paths).flatMap(([path, item]) => Object.keys(item).filter((key) => methods.includes(key)).map((method) => `${method.toUpperCase()} ${path}`));
}

async function problems(document: JsonObject): Promise<string | null> {
  // The parser dereferences what it is given: a copy keeps the document as built.
  const result = await validate(structuredClone(document) as never);
  return result.valid ? null : compileErrors(result);
}

describe('OpenAPI document (int)', () => {
  let app: TestApp;
  const document = openApiDocument();
  before(async () => {
    app = await TestApp.start();
  });
  after(() => app.stop());

  it('describes every route of the express app, each method, and nothing the app does not serve', () => {
    const served = expressRoutes(createApp(app.services)).map((route) => `${route.method.toUpperCase()} ${openApiPath(route.path)}`);
    expect(served).to.include('DELETE /admin/v1/accounts/{license}/tokens/{id}');
    expect(served).to.include('PATCH /admin/v1/accounts/{license}/browser-keys/{id}');
    expect(served).to.include('GET /sdk/{version}/{file}');
    expect(served).to.include('GET /openapi.json');
    expect([...documented(document)].sort()).to.deep.equal([...new Set(served)].sort());
    // The route labels of metrics and logs cover the same paths.
    expect([...new Set(operations.map((operation) => operation.path))].sort()).to.deep.equal([...routePatterns].sort());
  });

  it('passes the OpenAPI 3.1 validator, which refuses the document with a fault put in', async () => {
    expect(document.openapi).to.match(/^3\.1\./);
    expect(await problems(document)).to.equal(null);
    const broken = structuredClone(document);
    // A path parameter the operation no longer declares.
    const lead = (broken.paths as Paths)['/admin/v1/accounts/{license}/leads/{id}']?.get as JsonObject;
    lead.parameters = (lead.parameters as JsonObject[]).filter((parameter) => parameter.name !== 'id');
    expect(await problems(broken)).to.match(/id/);
  });

  it('is what the build wrote to dist/openapi.json', () => {
    expect(JSON.parse(readFileSync(openApiDocumentPath, 'utf8'))).to.deep.equal(document);
  });

  it('holds the item schemas of schemas/, and its example bodies are items the service accepts', () => {
    const schemas = (document.components as { schemas: Record<string, JsonObject> }).schemas;
    const itemKinds: Record<string, SchemaName> = { User: 'user', Event: 'event', Product: 'product', ProductEvent: 'product-event' };
    for (const name of Object.keys(itemKinds)) expect(schemas[name]?.additionalProperties, name).to.equal(false);
    expect(schemas.Event?.properties).to.have.property('eventTime').that.deep.equals({ $ref: '#/components/schemas/DateTime' });

    const validator = new Validator();
    let examples = 0;
    // The POSTs of ingest: their preflights (OPTIONS) have no body.
    for (const operation of operations.filter((o) => o.tag === 'Ingest' && o.body)) {
      const itemSchema = JSON.stringify(operation.body?.schema).match(/schemas\/(\w+)/)?.[1] as string;
      const kind = itemKinds[itemSchema] as SchemaName;
      for (const [name, example] of Object.entries(operation.body?.examples ?? {})) {
        const items = Array.isArray(example.value) ? example.value : [example.value];
        for (const item of items) {
          expect(validator.validate(kind, item), `${operation.operationId} ${name}`).to.deep.equal({ ok: true });
          examples += 1;
        }
      }
    }
    expect(examples).to.be.above(15);
  });
});
