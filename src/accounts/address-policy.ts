import type { Pool } from '../db/pool.js';
import { defaultAddressPolicy, isAddressPolicy, type AddressPolicy } from '../ingest/segment-context.js';

export const selectAddressPolicy = 'SELECT address_policy FROM accounts WHERE id = $1';
export const updateAddressPolicy = 'UPDATE accounts SET address_policy = $2 WHERE id = $1 RETURNING address_policy';

const maxCached = 10_000;

/**
 * What each account keeps of a visitor's address (docs/segment.md, "Context"), read once per
 * `ttlMs` per account: a change is in effect at once in the process that made it, and within
 * `ttlMs` everywhere else.
 */
export class AddressPolicies {
  private readonly cache = new Map<string, { policy: AddressPolicy; expiresAt: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly ttlMs = 30_000,
  ) {}

  async of(accountId: string): Promise<AddressPolicy> {
    const cached = this.cache.get(accountId);
    if (cached && cached.expiresAt > Date.now()) return cached.policy;
    const { rows } = await this.pool.query<{ address_policy: string }>(selectAddressPolicy, [accountId]);
    const stored = rows[0]?.address_policy;
    const policy = isAddressPolicy(stored) ? stored : defaultAddressPolicy;
    if (this.cache.size >= maxCached) this.cache.clear();
    this.cache.set(accountId, { policy, expiresAt: Date.now() + this.ttlMs });
    return policy;
  }

  async set(accountId: string, policy: AddressPolicy): Promise<void> {
    await this.pool.query(updateAddressPolicy, [accountId, policy]);
    this.cache.delete(accountId);
  }
}
