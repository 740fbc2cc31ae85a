/** SQL of accounts (table accounts). */

export const insertAccount = 'INSERT INTO accounts (id, name, license_code, token_hash) VALUES ($1, $2, $3, $4)';

export const selectByLicense = 'SELECT id, name, license_code, token_hash FROM accounts WHERE license_code = $1';

/** Every account, oldest first; never the token hashes. */
export const selectAccounts = 'SELECT id, name, license_code, created_at FROM accounts ORDER BY created_at, license_code';

/** A new access token's hash for a license code. */
export const replaceTokenHash = 'UPDATE accounts SET token_hash = $2 WHERE license_code = $1 RETURNING id, name';
