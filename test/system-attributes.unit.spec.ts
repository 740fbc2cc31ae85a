import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { migrationsDir, schemasDir } from '../src/paths.js';
import { sqlTypeOf, systemAttributes, systemDateTimes, type SystemAttributeType } from '../src/spec/system-attributes.js';

interface JsonSchema {
  type?: string;
  format?: string;
  $ref?: string;
  properties?: Record<string, JsonSchema>;
  $defs?: Record<string, JsonSchema>;
}

const readJson = (file: string): JsonSchema => JSON.parse(readFileSync(join(schemasDir, file), 'utf8')) as JsonSchema;

/** A property's schema with a `definitions.json#/$defs/...` reference resolved. */
function resolved(property: JsonSchema): JsonSchema {
  if (!property.$ref) return property;
  const match = /^definitions\.json#\/\$defs\/(\w+)$/.exec(property.$ref);
  const definition = match ? readJson('definitions.json').$defs?.[match[1] as string] : undefined;
  if (!definition) throw new Error(`unresolved reference ${property.$ref}`);
  return definition;
}

/** The JSON type (and format) each spec type is sent as. */
const jsonTypeOf: Record<SystemAttributeType, { type: string; format?: string }> = {
  STRING: { type: 'string' },
  INT: { type: 'integer' },
  INT4: { type: 'integer' },
  BOOL: { type: 'boolean' },
  TIMESTAMPTZ: { type: 'string', format: 'iso-datetime' },
};

/** The columns of `CREATE TABLE leads (...)` in the read-models migration: name, type, NOT NULL. */
function leadsColumns(): Map<string, { type: string; notNull: boolean }> {
  const sql = readFileSync(join(migrationsDir, '1732435200000_read-models.sql'), 'utf8');
  const body = /CREATE TABLE leads \(([\s\S]*?)\n\)/.exec(sql)?.[1];
  if (!body) throw new Error('no CREATE TABLE leads in the read-models migration');
  const columns = new Map<string, { type: string; notNull: boolean }>();
  for (const line of body.split('\n')) {
    const column = /^\s*([a-z_]+)\s+([a-z]+)\b(.*)$/.exec(line);
    if (!column || column[1] === 'PRIMARY') continue;
    columns.set(column[1] as string, { type: column[2] as string, notNull: /NOT NULL/.test(column[3] as string) });
  }
  return columns;
}

describe('system attributes of docs/spec.md 2.2 (unit)', () => {
  it('are the properties of schemas/user.json besides attributes, each sent as the JSON type of its spec type', () => {
    const properties = readJson('user.json').properties ?? {};
    expect(Object.keys(properties).filter((name) => name !== 'attributes')).to.have.members(systemAttributes.map((a) => a.name));
    for (const attribute of systemAttributes) {
      const schema = resolved(properties[attribute.name] ?? {});
      const expected = jsonTypeOf[attribute.type];
      expect({ type: schema.type, format: schema.format }, attribute.name).to.deep.equal({ type: expected.type, format: expected.format });
    }
  });

  it('each have a leads column of their SQL type, NOT NULL exactly when docs/spec.md 2.2 gives a default', () => {
    const columns = leadsColumns();
    for (const attribute of systemAttributes) {
      expect(columns.get(attribute.column), attribute.name).to.deep.equal({ type: sqlTypeOf[attribute.type], notNull: attribute.default !== undefined });
    }
  });

  it('give the date-times whose instants ingest keeps', () => {
    expect(systemDateTimes).to.deep.equal(['birth_date', 'last_active', 'updated_at', 'date_identified']);
  });
});
