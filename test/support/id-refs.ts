import { createHmac } from 'node:crypto';
import type { Pool } from '../../src/db/pool.js';
import type { AccountRefs } from '../../src/eventstore/events.js';
import type { Credentials, TestApp } from './app.js';

/**
 * The pseudonyms of an account's ids as the tests expect them, computed here from the account's key
 * in the database (account_id_keys) as docs/decisions.md specifies them: HMAC-SHA-256 of 'u' or
 * 'a', a newline and the id, its first 16 bytes in base64url. Apart from src/eventstore/pseudonyms.ts
 * on purpose, so that a test compares what the service stored with an answer of its own.
 */
export async function storedRefs(pool: Pool, accountId: string): Promise<AccountRefs> {
  const { rows } = await pool.query<{ key: Buffer }>('SELECT key FROM account_id_keys WHERE account_id = $1', [accountId]);
  const key = rows[0]?.key;
  if (!key) throw new Error(`account ${accountId} has no key for its ids`);
  const ref = (kind: 'u' | 'a', id: string): string => createHmac('sha256', key).update(`${kind}\n${id}`).digest().subarray(0, 16).toString('base64url');
  return { accountId, user: (id) => ref('u', id), anonymous: (id) => ref('a', id) };
}

/** The internal id of an account of the app. */
export async function accountIdOfCredentials(app: TestApp, account: Credentials): Promise<string> {
  const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
  const id = rows[0]?.id;
  if (!id) throw new Error(`no account of license code ${account.licenseCode}`);
  return id;
}

/**
 * The pseudonyms of an account of the app (`account` its credentials or its internal id): its key
 * made by the service if it has none yet (as its first ingest would), then computed as storedRefs.
 */
export async function accountRefs(app: TestApp, account: Credentials | string): Promise<AccountRefs> {
  const accountId = typeof account === 'string' ? account : await accountIdOfCredentials(app, account);
  await app.services.commands.pseudonyms.of(accountId);
  return storedRefs(app.pool, accountId);
}
