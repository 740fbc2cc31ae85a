import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { schemasDir } from '../paths.js';
import type { ImportKind } from './import-record.js';

/** How a CSV cell of a top-level field is read: as text, or as the JSON type the schema wants. */
export type FieldType = 'string' | 'integer' | 'boolean';

/**
 * The fields of one kind of item as a CSV may hold them, read from its JSON Schema (schemas/):
 * top-level fields with their types, and the one object of free keys (`attributes`, `eventData`
 * or `properties`) whose keys are columns `<object>.<key>`.
 */
export interface KindFields {
  kind: ImportKind;
  fields: ReadonlyMap<string, FieldType>;
  /** The object of free keys. */
  nested: string;
  /** Its keys are one level (a user's custom attributes); otherwise `a.b` nests objects. */
  flatKeys: boolean;
  /** What a key must look like, when the schema says (a user's custom attribute names). */
  keyPattern: RegExp | null;
  keyMaxLength: number | null;
  /** Sent even when no cell fills it (the users endpoint requires `attributes`). */
  nestedRequired: boolean;
  /** Fields every item needs, and sets of fields of which it needs one whole (userId, or anonymousId). */
  required: readonly string[];
  anyOf: readonly (readonly string[])[];
}

interface JsonSchema {
  type?: string | string[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: { required?: string[] }[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: { pattern?: string; maxLength?: number };
}

const schemaFiles: Record<ImportKind, string> = {
  users: 'user.json',
  events: 'event.json',
  products: 'product.json',
  productsevents: 'product-event.json',
};

function readSchema(file: string): JsonSchema {
  return JSON.parse(readFileSync(join(schemasDir, file), 'utf8')) as JsonSchema;
}

function typesOf(schema: JsonSchema, definitions: JsonSchema): string[] {
  if (schema.$ref) {
    const name = schema.$ref.split('/').at(-1) ?? '';
    const target = definitions.$defs?.[name];
    if (!target) throw new Error(`schemas: unknown reference ${schema.$ref}`);
    return typesOf(target, definitions);
  }
  return typeof schema.type === 'string' ? [schema.type] : (schema.type ?? []);
}

const cache = new Map<ImportKind, KindFields>();

/** The fields of `kind`, from its schema. */
export function kindFields(kind: ImportKind): KindFields {
  const known = cache.get(kind);
  if (known) return known;
  const definitions = readSchema('definitions.json');
  const schema = readSchema(schemaFiles[kind]);
  const fields = new Map<string, FieldType>();
  let nested: { name: string; schema: JsonSchema } | null = null;
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const types = typesOf(property, definitions);
    if (types.includes('object')) nested = { name, schema: property };
    else fields.set(name, types.includes('integer') ? 'integer' : types.includes('boolean') ? 'boolean' : 'string');
  }
  if (!nested) throw new Error(`schemas/${schemaFiles[kind]} has no object property`);
  const values = nested.schema.additionalProperties;
  const names = nested.schema.propertyNames;
  const fieldsOfKind: KindFields = {
    kind,
    fields,
    nested: nested.name,
    // Values that cannot be objects: the keys cannot nest.
    flatKeys: typeof values === 'object' && !typesOf(values, definitions).includes('object'),
    keyPattern: names?.pattern ? new RegExp(names.pattern) : null,
    keyMaxLength: names?.maxLength ?? null,
    nestedRequired: schema.required?.includes(nested.name) ?? false,
    required: (schema.required ?? []).filter((name) => name !== nested.name),
    anyOf: (schema.anyOf ?? []).map((option) => option.required ?? []).filter((set) => set.length > 0),
  };
  cache.set(kind, fieldsOfKind);
  return fieldsOfKind;
}
