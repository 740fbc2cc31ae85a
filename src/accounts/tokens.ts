import { randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  countActiveTokens,
  insertToken,
  revokeAllTokens,
  revokeToken as revokeTokenSql,
  selectActiveTokens,
} from './tokens-sql.js';
import { lockAccountByLicense } from './accounts-sql.js';
import { accountTextProblem } from './accounts-text.js';
import type { Account } from './account.js';
import { hashToken } from './token-hash.js';
import { accessTokenPrefix } from '../config.js';
import type { Pool } from '../db/pool.js';
import { inTransaction } from '../db/transaction.js';
import { deleteSessionsOfTokens } from './sessions-sql.js';

/** `ingest` posts items only; `ingest+read` also reads (read API, dashboard) and manages tokens. */
export type TokenScope = 'ingest' | 'ingest+read';
export const tokenScopes: readonly TokenScope[] = ['ingest', 'ingest+read'];

export const maxActiveTokens = 20;
export const maxLabelLength = 100;

export interface AccessToken {
  id: string;
  label: string;
  scope: TokenScope;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreatedToken extends AccessToken {
  /** Shown once; only its hash is stored. */
  accessToken: string;
}

export const newAccessToken = (): string => `${accessTokenPrefix}${randomBytes(32).toString('base64url')}`;

/** The shape of a credential's id (a UUID): anything else is unknown without a query. */
export const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Why `label` is not a token label, or null (the rule of account texts, src/accounts/accounts-text.ts). */
export const labelProblem = (label: unknown): string | null => accountTextProblem('label', label, maxLabelLength);

export function isTokenScope(scope: unknown): scope is TokenScope {
  return typeof scope === 'string' && (tokenScopes as readonly string[]).includes(scope);
}

interface TokenRow {
  id: string;
  label: string;
  scope: TokenScope;
  created_at: Date;
  last_used_at: Date | null;
}

const tokenOf = (row: TokenRow): AccessToken => ({
  id: row.id,
  label: row.label,
  scope: row.scope,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

/** A refusal of a token change the caller can explain: `limit` (20 active), `last` (the only active one). */
export class TokenChangeRefused extends Error {
  constructor(readonly why: 'limit' | 'last') {
    super(
      why === 'limit'
        ? `an account holds at most ${maxActiveTokens} active access tokens: revoke one first`
        : "this is the account's last active access token: create another before revoking it",
    );
  }
}

/** Stores a new token of `accountId` (inside the caller's transaction). */
export async function insertNewToken(client: pg.ClientBase, accountId: string, label: string, scope: TokenScope): Promise<CreatedToken> {
  const accessToken = newAccessToken();
  const { rows } = await client.query<TokenRow>(insertToken, [randomUUID(), accountId, label, scope, hashToken(accessToken)]);
  return { ...tokenOf(rows[0] as TokenRow), accessToken };
}

export async function listTokens(pool: Pool, accountId: string): Promise<AccessToken[]> {
  const { rows } = await pool.query<TokenRow>(selectActiveTokens, [accountId]);
  return rows.map(tokenOf);
}

/** The account of a license code, locked for the rest of the transaction (token changes of one account queue up). */
export async function lockedAccount(client: pg.ClientBase, licenseCode: string): Promise<Account | null> {
  const { rows } = await client.query<{ id: string; name: string; license_code: string }>(lockAccountByLicense, [licenseCode]);
  const row = rows[0];
  return row ? { id: row.id, name: row.name, licenseCode: row.license_code } : null;
}

/** A new token for the account (null when unknown); TokenChangeRefused('limit') at 20 active. */
export async function addToken(pool: Pool, licenseCode: string, label: string, scope: TokenScope): Promise<CreatedToken | null> {
  return inTransaction(pool, async (client) => {
    const account = await lockedAccount(client, licenseCode);
    if (!account) return null;
    const { rows } = await client.query<{ active: number }>(countActiveTokens, [account.id]);
    if ((rows[0]?.active ?? 0) >= maxActiveTokens) throw new TokenChangeRefused('limit');
    return insertNewToken(client, account.id, label.trim(), scope);
  });
}

export type RevokeResult = 'revoked' | 'unknown-account' | 'unknown-token';

/**
 * Revokes one active token of the account and ends the sessions signed in with it;
 * TokenChangeRefused('last') when it is the account's only active token. Another account's token
 * id is unknown here.
 */
export async function revokeToken(pool: Pool, licenseCode: string, tokenId: string): Promise<RevokeResult> {
  return inTransaction(pool, async (client) => {
    const account = await lockedAccount(client, licenseCode);
    if (!account) return 'unknown-account';
    if (!uuidShape.test(tokenId)) return 'unknown-token';
    const { rows } = await client.query<{ active: number }>(countActiveTokens, [account.id]);
    const revoked = await client.query(revokeTokenSql, [tokenId, account.id]);
    if (revoked.rowCount === 0) return 'unknown-token';
    if ((rows[0]?.active ?? 0) <= 1) throw new TokenChangeRefused('last');
    await client.query(deleteSessionsOfTokens, [[tokenId]]);
    return 'revoked';
  });
}

export interface RotatedToken extends Account {
  accessToken: string;
}

/**
 * Revokes every active token of the account (ending their sessions) and gives it one new token of
 * scope ingest+read, labelled `rotated`, shown once. Null when the license code is unknown.
 */
export async function rotateToken(pool: Pool, licenseCode: string): Promise<RotatedToken | null> {
  return inTransaction(pool, async (client) => {
    const account = await lockedAccount(client, licenseCode);
    if (!account) return null;
    const { rows } = await client.query<{ id: string }>(revokeAllTokens, [account.id]);
    await client.query(deleteSessionsOfTokens, [rows.map((r) => r.id)]);
    const created = await insertNewToken(client, account.id, 'rotated', 'ingest+read');
    return { ...account, accessToken: created.accessToken };
  });
}
