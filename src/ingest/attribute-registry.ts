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

  /**
   * Checks the attribute types of several users (in request order) and, unless `claim` is false,
   * registers the types of keys first seen here. A user rejected for a type conflict registers
   * nothing. Without claiming, the result says which users would be rejected by the types known
   * now (and by earlier users of the same batch).
   */
  async check(accountId: string, users: Record<string, AttributeType>[], { claim = true } = {}): Promise<TypeCheck> {
    const known = this.known(accountId);
    const unknownKeys = [...new Set(users.flatMap((types) => Object.keys(types)))].filter((key) => !known.has(key));
    await this.load(accountId, unknownKeys);

    const results: TypeCheck = users.map(() => null);
    const pending = new Map<string, AttributeType>();
    users.forEach((types, i) => {
      for (const [key, type] of Object.entries(types)) {
        const registered = known.get(key) ?? pending.get(key);
        if (registered && registered !== type) {
          results[i] = conflict(key, registered, type);
          return;
        }
      }
      for (const [key, type] of Object.entries(types)) if (!known.has(key)) pending.set(key, type);
    });
    if (pending.size === 0 || !claim) return results;

    const keys = [...pending.keys()];
    await this.pool.query(claimTypes, [accountId, keys, keys.map((key) => pending.get(key))]);
    // A new statement: it sees the rows of concurrent claims that won.
    await this.load(accountId, keys);
    users.forEach((types, i) => {
      if (results[i] !== null) return;
      for (const [key, type] of Object.entries(types)) {
        const registered = known.get(key);
        if (registered && registered !== type) {
          results[i] = conflict(key, registered, type);
          return;
        }
      }
    });
    return results;
  }
}
