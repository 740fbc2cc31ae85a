/** SQL of accounts (table accounts). */

export const insertAccount = 'INSERT INTO accounts (id, name, license_code) VALUES ($1, $2, $3)';

export const selectByLicense = 'SELECT id, name, license_code FROM accounts WHERE license_code = $1';

/** The account of a license code or of an id (the operator's command takes either). */
export const selectByLicenseOrId = 'SELECT id, name, license_code FROM accounts WHERE license_code = $1 OR id::text = $1';

/** The account of a license code, locked until the transaction ends: token changes of one account queue up. */
export const lockAccountByLicense = 'SELECT id, name, license_code FROM accounts WHERE license_code = $1 FOR UPDATE';

/** Every account, oldest first. */
export const selectAccounts = 'SELECT id, name, license_code, created_at FROM accounts ORDER BY created_at, license_code';
