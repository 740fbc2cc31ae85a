import { randomBytes, randomUUID } from 'node:crypto';
import * as sql from './browser-keys-sql.js';
import { hashToken } from './token-hash.js';
import { labelProblem, lockedAccount, uuidShape } from './tokens.js';
import { parseAllowedOrigins } from './origins.js';
import type { Pool } from '../db/pool.js';
import { inTransaction } from '../db/transaction.js';
import { browserKeyPrefix } from '../config.js';

export const maxActiveBrowserKeys = 20;

export const isBrowserKeyLike = (token: string): boolean => token.startsWith(browserKeyPrefix);

/** 192 random bits: 32 characters after the prefix. */
export const newBrowserKey = (): string => `${browserKeyPrefix}${randomBytes(24).toString('base64url')}`;

export interface BrowserKey {
  id: string;
  label: string;
  origins: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreatedBrowserKey extends BrowserKey {
  /** Shown once; only its hash is stored. */
  browserKey: string;
}

interface BrowserKeyRow {
  id: string;
  label: string;
  origins: string[];
  created_at: Date;
  last_used_at: Date | null;
}

const keyOf = (row: BrowserKeyRow): BrowserKey => ({
  id: row.id,
  label: row.label,
  origins: row.origins,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
});

/** A browser key's fields as sent by its owner, checked: what to store, or the first problem. */
export interface BrowserKeyFields {
  label?: string;
  origins?: string[];
}

/** Checks the body of a creation (`required`: label and origins both) or of a change (either). */
export function browserKeyFields(body: unknown, required: boolean): BrowserKeyFields | { problem: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { problem: 'body must be a JSON object' };
  const { label, origins, ...rest } = body as { label?: unknown; origins?: unknown };
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) return { problem: `unknown field ${JSON.stringify(unknown.slice(0, 50))}: a browser key has label and origins` };
  const fields: BrowserKeyFields = {};
  if (required || label !== undefined) {
    const problem = labelProblem(label);
    if (problem) return { problem };
    fields.label = (label as string).trim();
  }
  if (required || origins !== undefined) {
    const parsed = parseAllowedOrigins(origins);
    if ('problem' in parsed) return parsed;
    fields.origins = parsed.origins;
  }
  if (!required && fields.label === undefined && fields.origins === undefined) return { problem: 'body must change label or origins' };
  return fields;
}

/** A refusal to make another key: the account holds the most it may. */
export class BrowserKeyLimitReached extends Error {
  constructor() {
    super(`an account holds at most ${maxActiveBrowserKeys} active browser keys: revoke one first`);
  }
}

export async function listBrowserKeys(pool: Pool, accountId: string): Promise<BrowserKey[]> {
  const { rows } = await pool.query<BrowserKeyRow>(sql.selectActiveBrowserKeys, [accountId]);
  return rows.map(keyOf);
}

/** A new key of the account (null when the license code is unknown); BrowserKeyLimitReached at 20 active. */
export async function addBrowserKey(pool: Pool, licenseCode: string, label: string, origins: string[]): Promise<CreatedBrowserKey | null> {
  return inTransaction(pool, async (client) => {
    const account = await lockedAccount(client, licenseCode);
    if (!account) return null;
    const { rows: counted } = await client.query<{ active: number }>(sql.countActiveBrowserKeys, [account.id]);
    if ((counted[0]?.active ?? 0) >= maxActiveBrowserKeys) throw new BrowserKeyLimitReached();
    const browserKey = newBrowserKey();
    const { rows } = await client.query<BrowserKeyRow>(sql.insertBrowserKey, [randomUUID(), account.id, label, hashToken(browserKey), origins]);
    return { ...keyOf(rows[0] as BrowserKeyRow), browserKey };
  });
}

/** Changes the label or origins of an active key of the account; null when there is no such key. */
export async function changeBrowserKey(pool: Pool, accountId: string, keyId: string, fields: BrowserKeyFields): Promise<BrowserKey | null> {
  if (!uuidShape.test(keyId)) return null;
  const { rows } = await pool.query<BrowserKeyRow>(sql.updateBrowserKey, [keyId, accountId, fields.label ?? null, fields.origins ?? null]);
  return rows[0] ? keyOf(rows[0]) : null;
}

/** Revokes an active key of the account; false when there is no such key. */
export async function revokeBrowserKey(pool: Pool, accountId: string, keyId: string): Promise<boolean> {
  if (!uuidShape.test(keyId)) return false;
  const { rowCount } = await pool.query(sql.revokeBrowserKey, [keyId, accountId]);
  return (rowCount ?? 0) > 0;
}
