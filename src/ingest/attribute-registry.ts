import type { Pool } from '../db/pool.js';
import type { AttributeType } from './attributes.js';

const selectTypes = 'SELECT key, type FROM attribute_types WHERE account_id = $1 AND key = ANY($2::text[])';
const claimTypes = `INSERT INTO attribute_types (account_id, key, type)
  SELECT $1, k, t FROM unnest($2::text[], $3::text[]) AS u(k, t) ORDER BY k
  ON CONFLICT (account_id, key) DO NOTHING`;

/** For each element: null when accepted, or the message naming the key and both types. */
export type TypeCheck = (string | null)[];

const conflict = (key: string, registered: AttributeType, sent: AttributeType): string =>
  `attribute '${key}' is registered as ${registered} and cannot be sent as ${sent}`;

/**
 * Per account, the first accepted type of a custom attribute key is final. Claims go through a
 * unique row per (account, key) so that concurrent first uses agree; registered types are cached,
 * since they never change.
 */
export class AttributeTypeRegistry {
  private readonly cache = new Map<string, Map<string, AttributeType>>();

  constructor(private readonly pool: Pool) {}

  private known(accountId: string): Map<string, AttributeType> {
    let types = this.cache.get(accountId);
    if (!types) {
      types = new Map();
      this.cache.set(accountId, types);
    }
    return types;
  }

  private async load(accountId: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const { rows } = await this.pool.query<{ key: string; type: AttributeType }>(selectTypes, [accountId, keys]);
    const known = this.known(accountId);
    for (const row of rows) known.set(row.key, row.type);
  }

  /** Loads the registered types of these users' keys that are not cached yet. */
  async prepare(accountId: string, users: Record<string, AttributeType>[]): Promise<void> {
    const known = this.known(accountId);
    await this.load(
      accountId,
      [...new Set(users.flatMap((types) => Object.keys(types)))].filter((key) => !known.has(key)),
    );
  }

  /**
   * The conflict of one user's types with the registered types and with `accepted` (the types of
   * users accepted earlier in the same batch, not registered yet); null when there is none.
   */
  conflict(accountId: string, types: Record<string, AttributeType>, accepted: ReadonlyMap<string, AttributeType> = new Map()): string | null {
    const known = this.known(accountId);
    for (const [key, type] of Object.entries(types)) {
      const registered = known.get(key) ?? accepted.get(key);
      if (registered && registered !== type) return conflict(key, registered, type);
    }
    return null;
  }

  /** Adds the keys of an accepted user that are not registered yet to `accepted`. */
  accept(accountId: string, types: Record<string, AttributeType>, accepted: Map<string, AttributeType>): void {
    const known = this.known(accountId);
    for (const [key, type] of Object.entries(types)) if (!known.has(key) && !accepted.has(key)) accepted.set(key, type);
  }

  /** Registers `accepted` types; where a concurrent claim won, the registry then holds the winner. */
  async claim(accountId: string, accepted: ReadonlyMap<string, AttributeType>): Promise<void> {
    if (accepted.size === 0) return;
    const keys = [...accepted.keys()];
    await this.pool.query(claimTypes, [accountId, keys, keys.map((key) => accepted.get(key))]);
    // A new statement: it sees the rows of concurrent claims that won.
    await this.load(accountId, keys);
  }

  /**
   * Checks the attribute types of several users (in request order) and registers the types of keys
   * first seen here. A user rejected for a type conflict registers nothing.
   */
  async check(accountId: string, users: Record<string, AttributeType>[]): Promise<TypeCheck> {
    await this.prepare(accountId, users);
    const accepted = new Map<string, AttributeType>();
    const results: TypeCheck = users.map((types) => {
      const problem = this.conflict(accountId, types, accepted);
      if (!problem) this.accept(accountId, types, accepted);
      return problem;
    });
    await this.claim(accountId, accepted);
    return users.map((types, i) => results[i] ?? this.conflict(accountId, types));
  }
}
