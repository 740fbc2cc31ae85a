import type { Pool } from '../db/pool.js';
import { claimTypes, selectTypes } from './attribute-registry-sql.js';
import type { AttributeType } from './attributes.js';

/** The types of one user's custom attributes, by key. */
export type AttributeTypes = Record<string, AttributeType>;

/**
 * The conflict of one user's types with `registered` types, or with `pending` ones (first used by
 * users accepted before it in the same request), as a message naming the key and both types;
 * null when there is none.
 */
export function typeConflict(
  types: AttributeTypes,
  registered: ReadonlyMap<string, AttributeType>,
  pending: ReadonlyMap<string, AttributeType> = new Map(),
): string | null {
  for (const [key, type] of Object.entries(types)) {
    const decided = registered.get(key) ?? pending.get(key);
    if (decided && decided !== type) return `attribute '${key}' is registered as ${decided} and cannot be sent as ${type}`;
  }
  return null;
}

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
   * The registered types of the account, once those of these users' keys that are not cached yet
   * are loaded (one query). The map is live: it also shows types registered later in this process.
   */
  async registered(accountId: string, users: readonly AttributeTypes[]): Promise<ReadonlyMap<string, AttributeType>> {
    const known = this.known(accountId);
    await this.load(
      accountId,
      [...new Set(users.flatMap((types) => Object.keys(types)))].filter((key) => !known.has(key)),
    );
    return known;
  }

  /**
   * Registers the `pending` types of new keys. Where a concurrent claim won, the returned registered
   * types (live, as `registered`) hold the winner.
   */
  async claim(accountId: string, pending: ReadonlyMap<string, AttributeType>): Promise<ReadonlyMap<string, AttributeType>> {
    const known = this.known(accountId);
    if (pending.size === 0) return known;
    const keys = [...pending.keys()];
    await this.pool.query(claimTypes, [accountId, keys, keys.map((key) => pending.get(key))]);
    // A new statement: it sees the rows of concurrent claims that won.
    await this.load(accountId, keys);
    return known;
  }
}
