import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemasDir } from '../paths.js';
import { dateTimeHint, earliestInstant, latestInstant } from '../ingest/timestamps.js';
import type { Json, JsonObject } from './json.js';

/**
 * The JSON Schemas of schemas/ (the four item kinds and their shared definitions) as schemas of the
 * OpenAPI document's components: `event.json` becomes `Event`, `definitions.json#/$defs/identifier`
 * `Identifier`, and references between the files become references within the document. The
 * service validates items with the files themselves (src/ingest/validation.ts).
 */

/** `product-event.json` → `ProductEvent`, `identifier` → `Identifier`. */
export const componentName = (name: string): string =>
  name
    .replace(/\.json$/, '')
    .split(/[-_]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');

/** A `$ref` of schemas/ (`definitions.json#/$defs/text`, `user.json`) as one of the document. */
function documentRef(ref: string): string {
  const match = /^([\w-]+\.json)(?:#\/\$defs\/(\w+))?$/.exec(ref);
  if (!match) throw new Error(`schemas/: a $ref the document cannot follow: ${ref}`);
  return `#/components/schemas/${componentName(match[2] ?? (match[1] as string))}`;
}

/** What the document says of the service's own format, which no OpenAPI tool knows. */
const isoDateTime =
  `${dateTimeHint}: no zone is read as UTC; a numeric offset may be +hhmm or +hh:mm. ` +
  `The instant must lie from ${earliestInstant} to ${latestInstant} once read as UTC.`;

function converted(value: Json): Json {
  if (Array.isArray(value)) return value.map(converted);
  if (value === null || typeof value !== 'object') return value;
  const out: JsonObject = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === '$id') continue;
    if (key === '$comment') continue;
    out[key] = key === '$ref' && typeof inner === 'string' ? documentRef(inner) : converted(inner);
  }
  if (out.format === 'iso-datetime' && out.description === undefined) out.description = isoDateTime;
  return out;
}

/** Each schema of schemas/ and each of its `$defs`, by component name, in file order. */
export function itemSchemas(dir = schemasDir): Record<string, JsonObject> {
  const schemas: Record<string, JsonObject> = {};
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const schema = JSON.parse(readFileSync(join(dir, file), 'utf8')) as JsonObject;
    const { $defs, ...rest } = schema;
    if ($defs && typeof $defs === 'object' && !Array.isArray($defs)) {
      for (const [name, definition] of Object.entries($defs)) schemas[componentName(name)] = converted(definition) as JsonObject;
    }
    // definitions.json holds only $defs: no schema of its own.
    if (Object.keys(rest).some((key) => !key.startsWith('$'))) schemas[componentName(file)] = converted(rest) as JsonObject;
  }
  return schemas;
}
