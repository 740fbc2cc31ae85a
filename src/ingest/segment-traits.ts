import { systemAttributes } from '../spec/system-attributes.js';

/**
 * Segment traits as a user of docs/spec.md 2.1 (docs/segment.md, "Traits"): traits with a spec 2.2
 * meaning become those system attributes, the others custom attributes under keys the spec's
 * naming rule takes. The user item made here is then checked by the users command like any other.
 */

/** A user item's fields: its profile fields (spec 2.2 names) and its custom attributes. */
export interface ProfileFields {
  profile: Record<string, unknown>;
  attributes: Record<string, string | number | boolean>;
}

export const emptyProfile = (): ProfileFields => ({ profile: {}, attributes: {} });

/** The longest custom attribute key (schemas/user.json). */
const maxKeyLength = 100;

/** How deep a trait's objects are flattened into keys; deeper values are kept as JSON text. */
const maxFlattenDepth = 3;

/**
 * Segment's reserved traits, and their snake_case forms, that name a spec 2.2 attribute under
 * another name. Every spec 2.2 name (city, mobile, job_position, ...) also maps to itself.
 */
const traitNames: Record<string, string> = {
  first_name: 'firstName',
  last_name: 'lastName',
  birthday: 'birth_date',
  postal_code: 'zipcode',
  employee_count: 'number_of_employees',
  employees: 'number_of_employees',
  street: 'address',
};

const profileNames: ReadonlyMap<string, string> = new Map([
  ...systemAttributes.filter((a) => a.name !== 'userId' && a.name !== 'anonymousId').map((a): [string, string] => [a.column, a.name]),
  ...Object.entries(traitNames),
]);

const stringAttributes: ReadonlySet<string> = new Set(systemAttributes.filter((a) => a.type === 'STRING').map((a) => a.name));
const dateAttributes: ReadonlySet<string> = new Set(systemAttributes.filter((a) => a.type === 'TIMESTAMPTZ').map((a) => a.name));

/** Traits that are the message's ids, never attributes. */
const idTraits: ReadonlySet<string> = new Set(['id', 'user_id', 'anonymous_id']);

/**
 * A key as the spec's naming rule writes it (docs/spec.md 2.1 rule 5): `planName`, `Plan Name` and
 * `plan-name` become `plan_name`. Null when nothing usable is left (a key of symbols only, or one
 * starting with a digit).
 */
export function snakeKey(key: string): string | null {
  // Longer keys cannot become one of at most 100 characters: refused before any pattern runs.
  if (key.length > 4 * maxKeyLength) return null;
  const snake = key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1_')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z][a-z0-9_]*$/.test(snake) && snake.length <= maxKeyLength ? snake : null;
}

/** A date-only birthday (`1990-05-01`, as most apps keep one) is read as that day's midnight UTC. */
const dateOnly = /^\d{4}-\d{2}-\d{2}$/;

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Builds the profile fields of one message from its traits and context. A trait that cannot be
 * taken gives a message naming it (`traits.favoriteColors`), and the message is refused.
 */
export class ProfileBuilder {
  readonly fields: ProfileFields = emptyProfile();
  /** Where each target key came from, to name both traits of a collision. */
  private readonly sources = new Map<string, string>();

  constructor(private readonly path: string) {}

  /** Every trait of `traits`; two traits that set one attribute (`firstName`, `first_name`) are refused. */
  addTraits(traits: Record<string, unknown>): string | null {
    for (const [key, value] of Object.entries(traits)) {
      const problem = this.addTrait(key, value);
      if (problem) return problem;
    }
    return null;
  }

  /**
   * The traits of a group call, which describe the person's company: `name` is the spec's
   * company, `employees` its number_of_employees, the others company_* attributes.
   */
  addCompanyTraits(traits: Record<string, unknown>): string | null {
    return this.addNested(traits, this.path, (k) => (k === 'name' ? 'company' : k === 'employees' || k === 'employee_count' ? 'employee_count' : `company_${k}`));
  }

  /** A custom attribute from the message's context (utm_medium, ip), unless a trait set it. */
  contextAttribute(key: string, value: string): void {
    this.fields.attributes[key] ??= value;
  }

  /** A system attribute from the message's context (utm_source, device_type), unless a trait set it. */
  contextProfile(name: string, value: string): void {
    this.fields.profile[name] ??= value;
  }

  get isEmpty(): boolean {
    return Object.keys(this.fields.profile).length === 0 && Object.keys(this.fields.attributes).length === 0;
  }

  private addTrait(key: string, value: unknown): string | null {
    const source = `${this.path}.${key}`;
    const snake = snakeKey(key);
    if (snake === null) return `${source}: trait key '${key}' cannot be written as an attribute key (lowercase letters, digits and underscores, starting with a letter, at most ${maxKeyLength} characters)`;
    if (idTraits.has(snake) || value === null || value === undefined) return null;
    if (snake === 'address' && isPlainObject(value)) return this.addNested(value, source, (k) => (k === 'street' || k === 'city' || k === 'state' || k === 'country' || k === 'postal_code' ? k : `address_${k}`));
    if (snake === 'company' && isPlainObject(value)) return this.addNested(value, source, (k) => (k === 'name' ? 'company' : k === 'employee_count' ? k : `company_${k}`));
    const name = profileNames.get(snake);
    if (name !== undefined) return this.setSystem(name, value, source);
    return this.setCustom(snake, value, source, 1);
  }

  private addNested(value: Record<string, unknown>, source: string, keyOf: (snake: string) => string): string | null {
    for (const [key, inner] of Object.entries(value)) {
      const snake = snakeKey(key);
      if (snake === null) return `${source}.${key}: trait key '${key}' cannot be written as an attribute key`;
      if (inner === null || inner === undefined) continue;
      const target = keyOf(snake);
      const name = profileNames.get(target);
      const problem = name !== undefined ? this.setSystem(name, inner, `${source}.${key}`) : this.setCustom(target, inner, `${source}.${key}`, 2);
      if (problem) return problem;
    }
    return null;
  }

  private claim(target: string, source: string): string | null {
    const earlier = this.sources.get(target);
    if (earlier !== undefined && earlier !== source) return `${source} and ${earlier} both set ${target}: send one`;
    this.sources.set(target, source);
    return null;
  }

  /** A spec 2.2 attribute: its type is checked by schemas/user.json; numbers for text attributes (phone, zipcode) are taken as text. */
  private setSystem(name: string, value: unknown, source: string): string | null {
    const collision = this.claim(name, source);
    if (collision) return collision;
    let taken = value;
    if (stringAttributes.has(name) && typeof value === 'number') taken = String(value);
    if (dateAttributes.has(name) && typeof value === 'string' && dateOnly.test(value)) taken = `${value}T00:00:00Z`;
    this.fields.profile[name] = taken;
    return null;
  }

  /**
   * A custom attribute. The spec's four types hold no objects or arrays: an object's values are
   * flattened into keys (`plan: {name}` → `plan_name`), an array, or an object nested too deep, is
   * kept as its JSON text.
   */
  private setCustom(key: string, value: unknown, source: string, depth: number): string | null {
    if (isPlainObject(value) && depth < maxFlattenDepth) {
      for (const [inner, innerValue] of Object.entries(value)) {
        if (innerValue === null || innerValue === undefined) continue;
        const snake = snakeKey(inner);
        const joined = snake === null ? null : `${key}_${snake}`;
        if (joined === null || joined.length > maxKeyLength) return `${source}.${inner}: trait key '${inner}' cannot be written as an attribute key`;
        const problem = this.setCustom(joined, innerValue, `${source}.${inner}`, depth + 1);
        if (problem) return problem;
      }
      return null;
    }
    const collision = this.claim(`attributes.${key}`, source);
    if (collision) return collision;
    this.fields.attributes[key] = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : JSON.stringify(value);
    return null;
  }
}
