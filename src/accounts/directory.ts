import { randomBytes } from 'node:crypto';
import { markTokensUsed, selectAccountTokens, selectActiveTokenByHash, selectLicenseOfTokenHash } from './tokens-sql.js';
import { addToken, revokeToken, rotateToken, type CreatedToken, type RevokeResult, type RotatedToken, type TokenScope } from './tokens.js';
import type { Account } from './account.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { hashToken, matchingIndex } from './token-hash.js';
import { UseMarks } from './use-marks.js';

/** Who a presented access token is: its account, and which of the account's tokens it is. */
export interface Authenticated {
  account: Account;
  tokenId: string;
  scope: TokenScope;
}

interface CachedTokens {
  account: Account | null;
  tokens: { id: string; scope: TokenScope; hash: Buffer }[];
  expiresAt: number;
}

/** License codes are 24 lowercase hex characters; anything else is refused without a query. */
const licenseCodeShape = /^[0-9a-f]{24}$/;

// Compared against when the license code is unknown (or has no active token), so that every case
// does the same work.
const unknownAccountHash = hashToken(randomBytes(32).toString('hex'));
const noTokens = [{ id: '', scope: 'ingest' as TokenScope, hash: unknownAccountHash }];

const maxCachedUnknown = 10_000;

/**
 * Finds the account of a license code and checks a presented token against each of its active
 * tokens. Lookups are cached briefly: the hot path needs no query; a token created or revoked in
 * this process takes effect here at once (the cache entry is dropped), and within `ttlMs` in every
 * other process. Unknown codes are cached apart, so that a flood of made-up codes cannot push real
 * accounts out.
 */
export class AccountDirectory {
  private readonly cache = new Map<string, CachedTokens>();
  private readonly unknown = new Map<string, CachedTokens>();
  /** last_used_at of the tokens, marked off the request path. */
  private readonly used: UseMarks;
  /** The license code of access tokens looked up by hash alone (null: no active token has it). */
  private readonly licenseOfHash = new Map<string, { code: string | null; expiresAt: number }>();
  /** Counts forget() calls: a lookup that began before one is not cached (it may predate a revocation). */
  private forgets = 0;

  constructor(
    private readonly pool: Pool,
    private readonly ttlMs = 30_000,
    log?: Logger,
  ) {
    this.used = new UseMarks(pool, markTokensUsed, 'an access token', log);
  }

  async authenticate(licenseCode: string, token: string): Promise<Authenticated | null> {
    const entry = await this.lookup(licenseCode);
    const tokens = entry.tokens.length > 0 ? entry.tokens : noTokens;
    const index = matchingIndex(hashToken(token), tokens.map((t) => t.hash));
    const matched = index >= 0 ? tokens[index] : undefined;
    if (!entry.account || !matched || matched.id === '') return null;
    this.used.mark(matched.id);
    return { account: entry.account, tokenId: matched.id, scope: matched.scope };
  }

  /**
   * An access token presented without a license code (a Segment write key, docs/segment.md): its
   * account is found by the token's hash (a unique column), then the token is checked as
   * authenticate() does. Cached like the license codes' lookups.
   */
  async authenticateToken(token: string): Promise<Authenticated | null> {
    const hash = hashToken(token).toString('hex');
    const now = Date.now();
    let license = this.licenseOfHash.get(hash);
    if (!license || license.expiresAt <= now) {
      const forgetsBefore = this.forgets;
      const { rows } = await this.pool.query<{ license_code: string }>(selectLicenseOfTokenHash, [hashToken(token)]);
      license = { code: rows[0]?.license_code ?? null, expiresAt: now + Math.min(this.ttlMs, 5_000) };
      if (this.forgets === forgetsBefore) {
        if (this.licenseOfHash.size >= maxCachedUnknown) this.licenseOfHash.clear();
        this.licenseOfHash.set(hash, license);
      }
    }
    if (license.code === null) return null;
    const found = await this.authenticate(license.code, token);
    if (found) return found;
    // A token made in another process since this one cached the account's tokens: read them again.
    this.forget(license.code);
    return this.authenticate(license.code, token);
  }

  /** Whether `token` is an active access token of any account (an operator call made with one is refused 403, not 401). */
  async isActiveToken(token: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(selectActiveTokenByHash, [hashToken(token)]);
    return Boolean(rowCount);
  }

  /** The account of a license code, for callers already authenticated otherwise (the admin token). */
  async find(licenseCode: string): Promise<Account | null> {
    return (await this.lookup(licenseCode)).account;
  }

  /** Drops what this process knows of a license code: its next request reads the tokens anew. */
  forget(licenseCode: string): void {
    this.forgets += 1;
    this.cache.delete(licenseCode);
    this.unknown.delete(licenseCode);
    // A token revoked here must not pass as a write key either; one made here may have been looked up as unknown.
    this.licenseOfHash.clear();
  }

  async addToken(licenseCode: string, label: string, scope: TokenScope): Promise<CreatedToken | null> {
    const created = await addToken(this.pool, licenseCode, label, scope);
    this.forget(licenseCode);
    return created;
  }

  async revokeToken(licenseCode: string, tokenId: string): Promise<RevokeResult> {
    const result = await revokeToken(this.pool, licenseCode, tokenId);
    this.forget(licenseCode);
    return result;
  }

  async rotateToken(licenseCode: string): Promise<RotatedToken | null> {
    const rotated = await rotateToken(this.pool, licenseCode);
    this.forget(licenseCode);
    return rotated;
  }

  private async lookup(licenseCode: string): Promise<CachedTokens> {
    const now = Date.now();
    if (!licenseCodeShape.test(licenseCode)) return { account: null, tokens: noTokens, expiresAt: now };
    const cached = this.cache.get(licenseCode) ?? this.unknown.get(licenseCode);
    if (cached && cached.expiresAt > now) return cached;
    const forgetsBefore = this.forgets;
    const { rows } = await this.pool.query<{
      account_id: string;
      name: string;
      license_code: string;
      token_id: string | null;
      scope: TokenScope | null;
      token_hash: Buffer | null;
    }>(selectAccountTokens, [licenseCode]);
    const first = rows[0];
    const entry: CachedTokens = first
      ? {
          account: { id: first.account_id, name: first.name, licenseCode: first.license_code },
          tokens: rows.flatMap((r) => (r.token_id && r.scope && r.token_hash ? [{ id: r.token_id, scope: r.scope, hash: r.token_hash }] : [])),
          expiresAt: now + this.ttlMs,
        }
      : { account: null, tokens: noTokens, expiresAt: now + Math.min(this.ttlMs, 5_000) };
    if (this.forgets !== forgetsBefore) return entry;
    if (entry.account) {
      this.cache.set(licenseCode, entry);
      this.unknown.delete(licenseCode);
    } else {
      if (this.unknown.size >= maxCachedUnknown) this.unknown.clear();
      this.unknown.set(licenseCode, entry);
    }
    return entry;
  }
}
