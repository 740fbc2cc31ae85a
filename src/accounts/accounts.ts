import { randomBytes, randomUUID } from 'node:crypto';
import type { Pool } from '../db/pool.js';
import { inTransaction } from '../db/transaction.js';
import { insertAccount, selectAccounts, selectByLicense, selectByLicenseOrId } from './accounts-sql.js';
import type { Account } from './account.js';
import { insertNewToken } from './tokens.js';

export interface CreatedAccount extends Account {
  /** Shown once at creation; only its hash is stored. */
  accessToken: string;
}

/** A new account with its first access token (scope ingest+read, label `initial`). */
export async function createAccount(pool: Pool, name: string): Promise<CreatedAccount> {
  const account = { id: randomUUID(), name, licenseCode: randomBytes(12).toString('hex') };
  return inTransaction(pool, async (client) => {
    await client.query(insertAccount, [account.id, account.name, account.licenseCode]);
    const token = await insertNewToken(client, account.id, 'initial', 'ingest+read');
    return { ...account, accessToken: token.accessToken };
  });
}

export interface ListedAccount extends Account {
  createdAt: string;
}

export async function listAccounts(pool: Pool): Promise<ListedAccount[]> {
  const { rows } = await pool.query<{ id: string; name: string; license_code: string; created_at: Date }>(selectAccounts);
  return rows.map((r) => ({ id: r.id, name: r.name, licenseCode: r.license_code, createdAt: r.created_at.toISOString() }));
}

/** The account of a license code (or, with `orId`, of an account id too), or null. */
export async function findAccount(pool: Pool, licenseCode: string, { orId = false } = {}): Promise<Account | null> {
  const { rows } = await pool.query<{ id: string; name: string; license_code: string }>(orId ? selectByLicenseOrId : selectByLicense, [licenseCode]);
  const row = rows[0];
  return row ? { id: row.id, name: row.name, licenseCode: row.license_code } : null;
}
