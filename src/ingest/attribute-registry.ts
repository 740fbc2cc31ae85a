import type { Pool } from '../db/pool.js';
import type { AttributeType } from './attributes.js';

const selectTypes = 'SELECT key, type FROM attribute_types WHERE account_id = $1 AND key = ANY($2::text[])';
const claimTypes = `INSERT INTO attribute_types (account_id, key, type)
  SELECT $1, k, t FROM unnest($2::text[], $3::text[]) AS u(k, t) ORDER BY k
  ON CONFLICT (account_id, key) DO NOTHING`;

/** Whether a user is accepted; a user rejected for its types gets the message naming the key and both types. */
export type Admission = { accepted: true } | { accepted: false; conflict?: string };

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
  private async prepare(accountId: string, users: Record<string, AttributeType>[]): Promise<void> {
    const known = this.known(accountId);
    await this.load(
      accountId,
      [...new Set(users.flatMap((types) => Object.keys(types)))].filter((key) => !known.has(key)),
    );
  }

  /** The conflict of one user's types with the registered ones and `accepted`; null when none. */
  private conflict(accountId: string, types: Record<string, AttributeType>, accepted: ReadonlyMap<string, AttributeType>): string | null {
    const known = this.known(accountId);
    for (const [key, type] of Object.entries(types)) {
      const registered = known.get(key) ?? accepted.get(key);
      if (registered && registered !== type) return conflict(key, registered, type);
    }
    return null;
  }

  /** Registers `accepted` types; where a concurrent claim won, the cache then holds the winner. */
  private async claim(accountId: string, accepted: ReadonlyMap<string, AttributeType>): Promise<void> {
    if (accepted.size === 0) return;
    const keys = [...accepted.keys()];
    await this.pool.query(claimTypes, [accountId, keys, keys.map((key) => accepted.get(key))]);
    // A new statement: it sees the rows of concurrent claims that won.
    await this.load(accountId, keys);
  }

  /**
   * Decides, in request order, which users are accepted as far as attribute types go. A user whose
   * types conflict with the registered ones, or with those of a user accepted before it in the
   * batch, is rejected; otherwise `gate` (the user's remaining checks) decides. The keys first used
   * by accepted users are then registered, with their types; a user who loses such a claim to a
   * concurrent request is rejected after all. So a rejected user never decides a type.
   */
  async admit(
    accountId: string,
    users: Record<string, AttributeType>[],
    gate: (index: number) => Promise<boolean> = () => Promise.resolve(true),
  ): Promise<Admission[]> {
    await this.prepare(accountId, users);
    const known = this.known(accountId);
    const accepted = new Map<string, AttributeType>();
    const admissions: Admission[] = [];
    for (const [index, types] of users.entries()) {
      const problem = this.conflict(accountId, types, accepted);
      if (problem) admissions.push({ accepted: false, conflict: problem });
      else if (!(await gate(index))) admissions.push({ accepted: false });
      else {
        for (const [key, type] of Object.entries(types)) if (!known.has(key) && !accepted.has(key)) accepted.set(key, type);
        admissions.push({ accepted: true });
      }
    }
    await this.claim(accountId, accepted);
    return admissions.map((admission, index) => {
      if (!admission.accepted) return admission;
      const lost = this.conflict(accountId, users[index] as Record<string, AttributeType>, new Map());
      return lost ? { accepted: false, conflict: lost } : admission;
    });
  }
}
