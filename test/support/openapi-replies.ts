import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { expect } from 'chai';
import { routeLabel } from '../../src/http/route-label.js';
import { openApiPath } from '../../src/openapi/document.js';
import type { Json, JsonObject } from '../../src/openapi/json.js';
import type { Reply } from './app.js';

// ajv-formats is CommonJS: under NodeNext its plugin is the `default` of the module object.
const addFormats = ajvFormats.default;

/** Headers the document must name wherever a success or 429 reply carries them. */
const trackedHeaders = ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'idempotent-replayed', 'server-timing', 'set-cookie', 'location'];

/** `schema` with its references into the document (`#/components/...`) made absolute (`openapi.json#/...`). */
function rebased(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(rebased);
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === '$ref' && typeof value === 'string' && value.startsWith('#') ? `openapi.json${value}` : rebased(value)]));
}

/**
 * Holds real replies of the service against the OpenAPI document: the operation of the request's
 * method and path must list the reply's status, its JSON body must match the schema given there,
 * and the headers above it carries must be named there. Remembers which operations it saw.
 */
export class DocumentedReplies {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly compiled = new Map<string, ValidateFunction>();
  readonly seen = new Set<string>();

  constructor(private readonly document: JsonObject) {
    addFormats(this.ajv);
    this.ajv.addFormat('iso-datetime', true);
    this.ajv.addSchema(document as object, 'openapi.json');
  }

  /** Every operation of the document, as `GET /path`. */
  operations(): string[] {
    const paths = this.document.paths as Record<string, JsonObject>;
    return Object.entries(paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
  }

  private resolved(object: JsonObject): JsonObject {
    const ref = object.$ref;
    if (typeof ref !== 'string') return object;
    const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
    return (this.document.components as Record<string, Record<string, JsonObject>>)[section as string]?.[name as string] as JsonObject;
  }

  /** Asserts that `reply`, to `method` on `url` (a path, with or without a query), is one the document describes. */
  check<T>(method: string, url: string, reply: Reply<T>): Reply<T> {
    const path = new URL(url, 'http://service').pathname;
    const pattern = routeLabel(path);
    const operation = `${method.toUpperCase()} ${openApiPath(pattern)}`;
    const show = `${operation} (${path}) answered ${reply.status} ${JSON.stringify(reply.body).slice(0, 500)}`;
    const described = (this.document.paths as Record<string, Record<string, JsonObject>>)[openApiPath(pattern)]?.[method.toLowerCase()];
    expect(described, `undocumented: ${show}`).to.be.an('object');
    const responses = (described as JsonObject).responses as Record<string, JsonObject>;
    expect(responses, `status not documented: ${show}`).to.have.property(String(reply.status));
    const response = this.resolved(responses[String(reply.status)] as JsonObject);
    this.seen.add(operation);

    const content = response.content as Record<string, { schema: JsonObject }> | undefined;
    const json = content?.['application/json'];
    if (!content) {
      if (reply.status === 204) expect(reply.body, `no body documented: ${show}`).to.equal('');
    } else if (json) {
      expect(reply.headers.get('content-type') ?? '', show).to.contain('application/json');
      const key = `${operation} ${reply.status}`;
      let validate = this.compiled.get(key);
      if (!validate) {
        validate = this.ajv.compile(rebased(json.schema) as object);
        this.compiled.set(key, validate);
      }
      expect(validate(reply.body), `${show}\n${this.ajv.errorsText(validate.errors, { separator: '\n' })}`).to.equal(true);
    } else {
      const type = (reply.headers.get('content-type') ?? '').split(';')[0] as string;
      expect(Object.keys(content), show).to.include(type);
    }

    if ((reply.status >= 200 && reply.status < 400) || reply.status === 429) {
      const named = Object.keys((response.headers as JsonObject | undefined) ?? {}).map((name) => name.toLowerCase());
      const sent = trackedHeaders.filter((name) => reply.headers.has(name));
      expect(named, `headers sent but not documented: ${show}`).to.include.members(sent);
    }
    return reply;
  }
}
