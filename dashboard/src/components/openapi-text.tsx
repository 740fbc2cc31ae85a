import type { OpenApiDocument, OpenApiSchema } from '../openapi';

/** Pieces of the API reference page: descriptions and JSON Schemas of the OpenAPI document, as text. */

/** The name of a component a `$ref` points at: `#/components/schemas/Lead` → `Lead`. */
export const refName = (ref: string): string => ref.slice(ref.lastIndexOf('/') + 1);

/** What a `$ref` into the document's components points at (null when it is not there). */
export function resolved<T extends { $ref?: string }>(document: OpenApiDocument, part: T): T | null {
  if (!part.$ref) return part;
  const [, section, name] = /^#\/components\/(\w+)\/(.+)$/.exec(part.$ref) ?? [];
  return ((section && name && document.components[section]?.[name]) as T | undefined) ?? null;
}

/** Text with `code` in backticks. Always text, never markup. */
export function InlineText({ text }: { text: string }) {
  return <>{text.split(/(`[^`]+`)/).map((piece, at) => (/^`.+`$/.test(piece) ? <code key={at}>{piece.slice(1, -1)}</code> : piece))}</>;
}

/** A description: paragraphs at blank lines. */
export function Prose({ text }: { text?: string }) {
  if (!text) return null;
  return (
    <>
      {text.split(/\n\s*\n/).map((paragraph, index) => (
        <p key={index}>
          <InlineText text={paragraph} />
        </p>
      ))}
    </>
  );
}

const shown = (value: unknown): string => JSON.stringify(value) ?? String(value);

/** The type of a schema that is neither a reference nor an object with properties: `string, uuid, at most 255 characters`. */
function typeText(schema: OpenApiSchema): string {
  if (schema.const !== undefined) return shown(schema.const);
  if (schema.enum) return `one of ${schema.enum.map(shown).join(', ')}`;
  const words = [[schema.type ?? 'any value'].flat().join(' or ')];
  if (schema.format) words.push(schema.format);
  if (schema.minLength !== undefined) words.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) words.push(`at most ${schema.maxLength} characters`);
  if (schema.pattern !== undefined) words.push(`matching ${schema.pattern}`);
  if (schema.minimum !== undefined) words.push(`from ${schema.minimum}`);
  if (schema.maximum !== undefined) words.push(`to ${schema.maximum}`);
  if (schema.maxProperties !== undefined) words.push(`at most ${schema.maxProperties} keys`);
  if (schema.default !== undefined) words.push(`default ${shown(schema.default)}`);
  return words.join(', ');
}

/** A link to a schema of the Schemas section below, or its type as text. */
export function SchemaType({ schema }: { schema: OpenApiSchema }) {
  if (schema.$ref) return <a href={`#schema-${refName(schema.$ref)}`}>{refName(schema.$ref)}</a>;
  if (schema.oneOf) {
    return (
      <span>
        one of{' '}
        {schema.oneOf.map((option, index) => (
          <span key={index}>
            {index > 0 ? ' | ' : ''}
            {option.title && !option.$ref ? option.title : <SchemaType schema={option} />}
          </span>
        ))}
      </span>
    );
  }
  if (schema.items) {
    const bounds = [schema.minItems !== undefined ? `at least ${schema.minItems}` : '', schema.maxItems !== undefined ? `at most ${schema.maxItems}` : ''].filter(Boolean);
    return (
      <span>
        array{bounds.length ? ` (${bounds.join(', ')})` : ''} of <SchemaType schema={schema.items} />
      </span>
    );
  }
  if (typeof schema.additionalProperties === 'object' && !schema.properties) {
    return (
      <span>
        object of <SchemaType schema={schema.additionalProperties} />
      </span>
    );
  }
  if (schema.properties) return <span>object</span>;
  return <span>{typeText(schema)}</span>;
}

/** A schema: its fields (name, whether required, type, description), nested objects within. */
export function SchemaView({ schema, depth = 0 }: { schema: OpenApiSchema; depth?: number }) {
  const fields = schema.properties ? Object.entries(schema.properties) : [];
  const options = schema.oneOf?.filter((option) => option.properties) ?? [];
  return (
    <div class="schema">
      {depth > 0 || fields.length === 0 ? null : <Prose text={schema.description} />}
      {fields.length === 0 && options.length === 0 ? (
        <p class="schema-type">
          <SchemaType schema={schema} />
        </p>
      ) : null}
      {options.map((option, index) => (
        <div key={index} class="schema-option">
          <p class="schema-type">{option.title ?? `Form ${index + 1}`}:</p>
          <SchemaView schema={option} depth={depth + 1} />
        </div>
      ))}
      {fields.length > 0 ? (
        <ul class="fields">
          {fields.map(([name, field]) => (
            <li key={name}>
              <code>{name}</code>
              {schema.required?.includes(name) ? <span class="required"> required</span> : null}: <SchemaType schema={field} />
              {field.description ? (
                <span class="field-description">
                  {' · '}
                  <InlineText text={field.description} />
                </span>
              ) : null}
              {field.properties && depth < 3 ? <SchemaView schema={field} depth={depth + 1} /> : null}
              {field.items?.properties && depth < 3 ? <SchemaView schema={field.items} depth={depth + 1} /> : null}
            </li>
          ))}
          {schema.additionalProperties === false ? <li class="hint">No other fields.</li> : null}
        </ul>
      ) : null}
    </div>
  );
}
