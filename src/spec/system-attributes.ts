/**
 * The system attributes of a user (docs/spec.md 2.2): the one list that the schema check, the date-time
 * instants of ingest, the leads columns and the read API follow. `schemas/user.json` and the leads
 * table of the read-models migration are held against it by test/system-attributes.unit.spec.ts.
 */

/** The types of docs/spec.md 2.2. INT and INT4 are both a PostgreSQL integer. */
export type SystemAttributeType = 'STRING' | 'INT' | 'INT4' | 'BOOL' | 'TIMESTAMPTZ';

/** A default of docs/spec.md 2.2: a constant, or the time the profile was created (its first event's receipt). */
export type SystemAttributeDefault = { value: string | number | boolean } | 'creation time';

export interface SystemAttribute {
  /** The key in request bodies (camelCase for the four ids and names). */
  name: string;
  /** The column of the leads read model. */
  column: string;
  type: SystemAttributeType;
  /** Absent: none (the column is null until sent). */
  default?: SystemAttributeDefault;
}

const attribute = (name: string, type: SystemAttributeType, defaultValue?: SystemAttributeDefault, column = name): SystemAttribute =>
  defaultValue === undefined ? { name, column, type } : { name, column, type, default: defaultValue };

export const systemAttributes: readonly SystemAttribute[] = [
  attribute('userId', 'STRING', undefined, 'user_id'),
  attribute('anonymousId', 'STRING', undefined, 'anonymous_id'),
  attribute('firstName', 'STRING', undefined, 'first_name'),
  attribute('lastName', 'STRING', undefined, 'last_name'),
  attribute('email', 'STRING'),
  attribute('birth_date', 'TIMESTAMPTZ'),
  attribute('gender', 'STRING'),
  attribute('maritial_status', 'STRING'),
  attribute('children', 'INT'),
  attribute('education', 'STRING'),
  attribute('title', 'STRING'),
  attribute('address', 'STRING'),
  attribute('city', 'STRING'),
  attribute('state', 'STRING'),
  attribute('zipcode', 'STRING'),
  attribute('country', 'STRING'),
  attribute('phone', 'STRING'),
  attribute('job_position', 'STRING'),
  attribute('company', 'STRING'),
  attribute('number_of_employees', 'INT'),
  attribute('annual_revenue', 'INT'),
  attribute('opt_in_sms', 'BOOL', { value: true }),
  attribute('opt_in_email', 'BOOL', { value: true }),
  attribute('mobile', 'STRING'),
  attribute('last_active', 'TIMESTAMPTZ'),
  attribute('updated_at', 'TIMESTAMPTZ'),
  attribute('date_identified', 'TIMESTAMPTZ', 'creation time'),
  attribute('points', 'INT4', { value: 0 }),
  attribute('device_type', 'STRING'),
  attribute('utm_source', 'STRING'),
];

/** The PostgreSQL type of each spec type, as the leads columns have it. */
export const sqlTypeOf: Record<SystemAttributeType, string> = {
  STRING: 'text',
  INT: 'integer',
  INT4: 'integer',
  BOOL: 'boolean',
  TIMESTAMPTZ: 'timestamptz',
};

/** The profile fields of a user (all but the two ids). */
export const profileAttributes: readonly SystemAttribute[] = systemAttributes.filter((a) => a.name !== 'userId' && a.name !== 'anonymousId');

/** The fields sent as date-times: ingest keeps their UTC instants. */
export const systemDateTimes: readonly string[] = systemAttributes.filter((a) => a.type === 'TIMESTAMPTZ').map((a) => a.name);

/**
 * The attributes a lead shows under their docs/spec.md 2.2 names (`email`, `opt_in_sms`, ...): all but the
 * two ids and the two names, whose request and column names differ.
 */
export const attributesUnderSpecNames: readonly SystemAttribute[] = systemAttributes.filter((a) => a.name === a.column);
