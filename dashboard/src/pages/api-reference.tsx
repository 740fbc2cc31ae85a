import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { openApiDocument } from '../api';
import type { OpenApiDocument, OpenApiOperation, OpenApiPart } from '../openapi';
import { ErrorText, PageHeading } from '../components';
import { InlineText, Prose, refName, resolved, SchemaType, SchemaView } from '../components/openapi-text';
import { ScrollBox } from '../components/scroll-box';

/** Where the page is, under /dashboard: open to anyone, signed in or not (app.tsx). */
export const apiReferencePath = '/api';

const credentialNames: Record<string, string> = {
  accessToken: 'an access token of the account',
  adminToken: 'the admin token',
  session: 'a session cookie',
  browserKey: 'a browser key of the account, from a page of its origins',
  browserKeyInQuery: 'a browser key in the query parameter key',
  writeKey: 'a Segment write key of the account',
};

/** Who may call an operation, from its security requirements. */
function credentialsText(security: OpenApiOperation['security']): string {
  if (!security || security.length === 0) return 'none';
  const options = security.map((requirement) => Object.keys(requirement).map((name) => credentialNames[name] ?? name).join(' and ') || 'none');
  return options.join(', or ');
}

interface Listed {
  method: string;
  path: string;
  operation: OpenApiOperation;
}

/** Every operation of the document, by its first tag, in the order of the document's tags. */
function byTag(document: OpenApiDocument): { name: string; description?: string; operations: Listed[] }[] {
  const all: Listed[] = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ method, path, operation })));
  return (document.tags ?? []).map((tag) => ({ ...tag, operations: all.filter((listed) => listed.operation.tags?.[0] === tag.name) }));
}

/**
 * The service's OpenAPI document (/openapi.json) as a page: each operation with its credentials,
 * parameters, request body and replies, then the schemas they refer to. Everything is text.
 */
export function ApiReferencePage() {
  const [document, setDocument] = useState<OpenApiDocument | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    openApiDocument().then(setDocument, setError);
  }, []);

  return (
    <section aria-labelledby="page-heading" class="api-reference">
      <PageHeading>API reference</PageHeading>
      <ErrorText error={error} />
      {!document && !error ? <p>Loading…</p> : null}
      {document ? <Reference document={document} /> : null}
    </section>
  );
}

function Reference({ document }: { document: OpenApiDocument }) {
  const tags = byTag(document);
  return (
    <>
      <p class="hint">
        {document.info.title} {document.info.version}, from its OpenAPI {document.openapi} document: <a href="/openapi.json">/openapi.json</a>.
      </p>
      <Prose text={document.info.description} />
      <h2>Credentials</h2>
      <Definitions entries={document.components.securitySchemes ?? {}} name={(key) => credentialNames[key] ?? key} />
      <nav aria-label="Operations" class="contents">
        <h2>Operations</h2>
        <ul>
          {tags.map((tag) => (
            <li key={tag.name}>
              <a href={`#tag-${tag.name.replace(/\W+/g, '-')}`}>{tag.name}</a>
            </li>
          ))}
          <li>
            <a href="#schemas">Schemas</a>
          </li>
          <li>
            <a href="#headers">Headers</a>
          </li>
        </ul>
      </nav>
      {tags.map((tag) => (
        <section key={tag.name} aria-labelledby={`tag-${tag.name.replace(/\W+/g, '-')}`}>
          <h2 id={`tag-${tag.name.replace(/\W+/g, '-')}`}>{tag.name}</h2>
          <Prose text={tag.description} />
          {tag.operations.map((listed) => (
            <Operation key={listed.operation.operationId} document={document} {...listed} />
          ))}
        </section>
      ))}
      <section aria-labelledby="schemas">
        <h2 id="schemas">Schemas</h2>
        {Object.entries(document.components.schemas).map(([name, schema]) => (
          <article key={name} id={`schema-${name}`} class="schema-entry" aria-label={`Schema ${name}`}>
            <h3>{name}</h3>
            {schema.title ? <p class="hint">{schema.title}</p> : null}
            <SchemaView schema={schema} />
          </article>
        ))}
      </section>
      <section aria-labelledby="headers">
        <h2 id="headers">Headers</h2>
        <Definitions entries={document.components.headers ?? {}} name={(key) => key} />
      </section>
    </>
  );
}

/** Named descriptions (the credentials, the headers) as a definition list. */
function Definitions({ entries, name }: { entries: Record<string, { description?: string }>; name: (key: string) => string }) {
  return (
    <dl class="facts definitions">
      {Object.entries(entries).map(([key, entry]) => (
        <Fragment key={key}>
          <dt>{name(key)}</dt>
          <dd>
            <InlineText text={entry.description ?? ''} />
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

function Operation({ document, method, path, operation }: Listed & { document: OpenApiDocument }) {
  const parameters = (operation.parameters ?? []).map((part) => resolved(document, part)).filter((part): part is OpenApiPart => part !== null);
  const body = operation.requestBody ? resolved(document, operation.requestBody) : null;
  const media = body?.content?.['application/json'];
  const label = `${method.toUpperCase()} ${path}`;
  return (
    <article class="operation" id={`op-${operation.operationId}`} aria-label={label}>
      <h3>
        <span class="method">{method.toUpperCase()}</span> <code class="path">{path}</code>
      </h3>
      {operation.summary ? <p class="summary">{operation.summary}</p> : null}
      <Prose text={operation.description} />
      <dl class="facts">
        <dt>Credentials</dt>
        <dd>{credentialsText(operation.security)}</dd>
      </dl>
      {parameters.length > 0 ? (
        <>
          <h4>Parameters</h4>
          <ScrollBox label={`${label} parameters`}>
            <table class="data">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">In</th>
                  <th scope="col">Type</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {parameters.map((parameter) => (
                  <tr key={`${parameter.in}-${parameter.name}`}>
                    <td>
                      <code>{parameter.name}</code>
                      {parameter.required ? ' (required)' : ''}
                    </td>
                    <td>{parameter.in}</td>
                    <td class="details">{parameter.schema ? <SchemaType schema={parameter.schema} /> : null}</td>
                    <td class="details">
                      <InlineText text={parameter.description ?? ''} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
        </>
      ) : null}
      {body && media?.schema ? (
        <>
          <h4>Request body</h4>
          <p>
            JSON: <SchemaType schema={media.schema} />. <InlineText text={body.description ?? ''} />
          </p>
          {Object.entries(media.examples ?? {}).map(([name, example]) => (
            <details key={name} class="example-body">
              <summary>Example: {example.summary ?? name}</summary>
              <pre class="json" tabIndex={0}>
                {JSON.stringify(example.value, null, 2)}
              </pre>
            </details>
          ))}
        </>
      ) : null}
      <h4>Replies</h4>
      <Replies document={document} operation={operation} label={label} />
    </article>
  );
}

function Replies({ document, operation, label }: { document: OpenApiDocument; operation: OpenApiOperation; label: string }) {
  return (
    <ScrollBox label={`${label} replies`}>
      <table class="data">
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">When</th>
            <th scope="col">Body</th>
            <th scope="col">Headers</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(operation.responses).map(([status, part]) => {
            const reply = resolved(document, part);
            const [type, media] = Object.entries(reply?.content ?? {})[0] ?? [];
            return (
              <tr key={status}>
                <td>{status}</td>
                <td class="details">
                  <InlineText text={reply?.description ?? ''} />
                </td>
                <td>{media?.schema ? <SchemaType schema={media.schema} /> : (type ?? 'none')}</td>
                <td class="details">{Object.entries(reply?.headers ?? {}).map(([name, header]) => (header.$ref ? refName(header.$ref) : name)).join(', ') || '—'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}
