import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import { schemasDir } from '../paths.js';
import { fieldPath } from './field-path.js';
import { unstorableValue } from './storable.js';
import { dateTimeHint, dateTimeProblem, toUtcInstant } from './timestamps.js';

export type SchemaName = 'user' | 'event' | 'product' | 'product-event' | 'erasure-request';

// ajv-formats is CommonJS: under NodeNext its plugin is the `default` of the module object.
const addFormats = ajvFormats.default;

/** Names the field at ajv's `instancePath` (`/list/2/x`), or its child `property`; a number there is taken as an index. */
function fieldName(instancePath: string, property?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (property !== undefined) parts.push(property);
  return fieldPath(parts.map((part) => (/^\d+$/.test(part) ? Number(part) : part)));
}

function typeWords(type: unknown): string {
  const types = Array.isArray(type) ? type : [String(type)];
  const words = types.map((t) => (t === 'integer' ? 'an integer' : t === 'null' ? 'null' : t === 'array' ? 'an array' : t === 'object' ? 'an object' : `a ${t}`));
  return words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : (words[0] ?? '');
}

/** The error of Ajv's first errors that the message is about. */
const mainError = (errors: ErrorObject[]): ErrorObject | undefined => errors.find((e) => e.keyword === 'propertyNames') ?? errors[0];

const idRequired = (errors: ErrorObject[]): boolean => errors.some((e) => e.keyword === 'anyOf' && e.instancePath === '' && e.schemaPath === '#/anyOf');

/**
 * The top-level field Ajv's first errors are about, for grouping (results.ts, `rejected`): one of
 * the schema's own properties (`known`), 'unknown field' for a field the schema does not have,
 * '' for the item as a whole.
 */
export function errorField(errors: ErrorObject[], known: ReadonlySet<string>): string {
  if (idRequired(errors)) return 'userId/anonymousId';
  const error = mainError(errors);
  if (!error) return '';
  const params = error.params as Record<string, unknown>;
  const top = error.instancePath.split('/')[1] ?? (error.keyword === 'required' ? String(params.missingProperty) : error.keyword === 'additionalProperties' ? String(params.additionalProperty) : '');
  if (top === '') return '';
  return known.has(top) ? top : 'unknown field';
}

/** One readable message that names the field, from Ajv's first errors. */
export function describeErrors(errors: ErrorObject[]): string {
  if (idRequired(errors)) return 'userId or anonymousId is required';
  const error = mainError(errors);
  if (!error) return 'invalid item';
  const field = fieldName(error.instancePath) || 'the item';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${fieldName(error.instancePath, String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `unknown field '${fieldName(error.instancePath, String(params.additionalProperty))}'`;
    case 'propertyNames':
      return `attribute key '${String(params.propertyName)}' is not allowed: keys use lowercase letters, digits and underscores and start with a letter (at most 100 characters)`;
    case 'type':
      return `${field} must be ${typeWords(params.type)}`;
    case 'format':
      // The only format is iso-datetime; `data` (ajv's verbose mode) is the refused string.
      return `${field} ${(typeof error.data === 'string' && dateTimeProblem(error.data)) || `must be ${dateTimeHint}`}`;
    case 'minLength':
      return `${field} cannot be empty`;
    case 'maxLength':
      return `${field} must be at most ${String(params.limit)} characters`;
    case 'maxProperties':
      return `${field} must have at most ${String(params.limit)} properties`;
    case 'minimum':
    case 'maximum':
      return `${field} must be an integer from -2147483648 to 2147483647`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}

/** Refused: the message names the field; `field` is its top-level field (errorField). */
export type Validation = { ok: true } | { ok: false; message: string; field: string };

/** The JSON Schemas of schemas/, compiled once. */
export class Validator {
  private readonly validators = new Map<SchemaName, ValidateFunction>();
  /** The top-level properties of each schema. */
  private readonly fields = new Map<SchemaName, ReadonlySet<string>>();

  constructor(dir = schemasDir) {
    const ajv = new Ajv({ allErrors: false, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
    addFormats(ajv);
    ajv.addFormat('iso-datetime', { type: 'string', validate: (value: string) => toUtcInstant(value) !== null });
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      ajv.addSchema(JSON.parse(readFileSync(join(dir, file), 'utf8')) as object);
    }
    for (const name of ['user', 'event', 'product', 'product-event', 'erasure-request'] as const) {
      const validate = ajv.getSchema(`${name}.json`);
      if (!validate) throw new Error(`schemas/${name}.json is missing`);
      this.validators.set(name, validate);
      const properties = (validate.schema as { properties?: Record<string, unknown> }).properties ?? {};
      this.fields.set(name, new Set(Object.keys(properties)));
    }
  }

  validate(name: SchemaName, item: unknown): Validation {
    // First: a refused large integer is still an object here, which the schema would misname.
    const unstorable = unstorableValue(item);
    if (unstorable) return { ok: false, message: unstorable, field: '' };
    const validate = this.validators.get(name) as ValidateFunction;
    if (validate(item)) return { ok: true };
    const errors = validate.errors ?? [];
    return { ok: false, message: describeErrors(errors), field: errorField(errors, this.fields.get(name) as ReadonlySet<string>) };
  }
}
