import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Pool } from './db/pool.js';
import { insertAccount, replaceTokenHash, selectAccounts, selectByLicense } from './accounts-sql.js';

export interface Account {
  id: string;
  name: string;
  licenseCode: string;
}

export interface CreatedAccount extends Account {
  /** Shown once at creation; only its hash is stored. */
  accessToken: string;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Equal-time comparison of a presented secret with a stored hash. */
export function tokenMatches(presented: string, storedHash: Buffer): boolean {
  const presentedHash = hashToken(presented);
  return presentedHash.length === storedHash.length && timingSafeEqual(presentedHash, storedHash);
}

/** License codes are 24 lowercase hex characters; anything else is refused without a query. */
const licenseCodeShape = /^[0-9a-f]{24}$/;

const newAccessToken = (): string => `trk_${randomBytes(32).toString('base64url')}`;

export async function createAccount(pool: Pool, name: string): Promise<CreatedAccount> {
  const account = {
    id: randomUUID(),
    name,
    licenseCode: randomBytes(12).toString('hex'),
    accessToken: newAccessToken(),
  };
  await pool.query(insertAccount, [account.id, account.name, account.licenseCode, hashToken(account.accessToken)]);
  return account;
}

export interface ListedAccount extends Account {
  createdAt: string;
}

export async function listAccounts(pool: Pool): Promise<ListedAccount[]> {
  const { rows } = await pool.query<{ id: string; name: string; license_code: string; created_at: Date }>(
    selectAccounts,
  );
  return rows.map((r) => ({ id: r.id, name: r.name, licenseCode: r.license_code, createdAt: r.created_at.toISOString() }));
}

/**
 * Gives the account a new access token (shown once) and forgets the old one: every process refuses
 * the old token once its cached lookup expires (AccountDirectory's ttl, 30 s). Null when unknown.
 */
export async function rotateToken(pool: Pool, licenseCode: string): Promise<CreatedAccount | null> {
  const accessToken = newAccessToken();
  const { rows } = await pool.query<{ id: string; name: string }>(
    replaceTokenHash,
    [licenseCode, hashToken(accessToken)],
  );
  const row = rows[0];
  return row ? { id: row.id, name: row.name, licenseCode, accessToken } : null;
}

interface CachedAccount {
  account: Account | null;
  tokenHash: Buffer;
  expiresAt: number;
}

// Compared against when the license code is unknown, so that both cases take the same time.
const unknownAccountHash = hashToken(randomBytes(32).toString('hex'));

const maxCachedUnknown = 10_000;

/**
 * Finds the account of a license code and checks its token. Lookups are cached briefly: the hot path
 * needs no query, and a rotated token takes effect within `ttlMs` in every process. Unknown codes
 * are cached apart, so that a flood of made-up codes cannot push real accounts out.
 */
export class AccountDirectory {
  private readonly cache = new Map<string, CachedAccount>();
  private readonly unknown = new Map<string, CachedAccount>();

  constructor(
    private readonly pool: Pool,
    private readonly ttlMs = 30_000,
  ) {}

  async authenticate(licenseCode: string, token: string): Promise<Account | null> {
    const entry = await this.lookup(licenseCode);
    const matches = tokenMatches(token, entry.tokenHash);
    return matches ? entry.account : null;
  }

  /** The account of a license code, for callers already authenticated otherwise (the admin token). */
  async find(licenseCode: string): Promise<Account | null> {
    return (await this.lookup(licenseCode)).account;
  }

  private async lookup(licenseCode: string): Promise<CachedAccount> {
    const now = Date.now();
    if (!licenseCodeShape.test(licenseCode)) return { account: null, tokenHash: unknownAccountHash, expiresAt: now };
    const cached = this.cache.get(licenseCode) ?? this.unknown.get(licenseCode);
    if (cached && cached.expiresAt > now) return cached;
    const { rows } = await this.pool.query<{ id: string; name: string; license_code: string; token_hash: Buffer }>(selectByLicense, [
      licenseCode,
    ]);
    const row = rows[0];
    const entry: CachedAccount = row
      ? { account: { id: row.id, name: row.name, licenseCode: row.license_code }, tokenHash: row.token_hash, expiresAt: now + this.ttlMs }
      : { account: null, tokenHash: unknownAccountHash, expiresAt: now + Math.min(this.ttlMs, 5_000) };
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
