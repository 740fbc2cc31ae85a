import { escapeLiteral } from 'pg';

/** The statements of person keys (migrations: erasure). */

/**
 * Makes the keys of people who have none, of one or more accounts (in account and person order,
 * so that two transactions making keys of the same new people wait for each other instead of
 * deadlocking), and returns the current key of each: those made now, and those that were there
 * before the statement began. A key made by another transaction meanwhile is in neither; the
 * caller reads it again.
 */
export const ensureKeys = `
WITH wanted AS (
  SELECT account_id, person_id, key FROM unnest($1::uuid[], $2::text[], $3::bytea[]) AS w(account_id, person_id, key)
), made AS (
  INSERT INTO person_keys (account_id, person_id, key)
  SELECT account_id, person_id, key FROM wanted ORDER BY account_id, person_id
  ON CONFLICT (account_id, person_id) WHERE erased_at IS NULL DO NOTHING
  RETURNING key_id, account_id, person_id, key
)
SELECT key_id, account_id, person_id, key FROM made
UNION ALL
SELECT k.key_id, k.account_id, k.person_id, k.key FROM person_keys k JOIN wanted w USING (account_id, person_id)
WHERE k.erased_at IS NULL`;

export const currentKeys = `
SELECT key_id, person_id, key FROM person_keys
WHERE account_id = $1 AND person_id = ANY($2::text[]) AND erased_at IS NULL`;

export const keysById = `
SELECT key_id, account_id, key, erasure_id, erased_at FROM person_keys WHERE key_id = ANY($1::bigint[])`;

/** Erases the current keys of people: returns how many. */
export const eraseKeys = `
WITH erased AS (
  UPDATE person_keys SET key = NULL, erasure_id = $3, erased_at = now()
  WHERE account_id = $1 AND person_id = ANY($2::text[]) AND erased_at IS NULL
  RETURNING key_id
)
SELECT count(*)::int AS erased FROM erased`;

/** ensureKeys with its values as literals, for a statement sent with others in one round trip. */
export function ensureKeysWithValues(wanted: readonly { accountId: string; personId: string; key: Buffer }[]): string {
  const array = (values: string[], type: string): string => `ARRAY[${values.join(', ')}]::${type}[]`;
  const values: Record<string, string> = {
    '$1::uuid[]': array(wanted.map((w) => escapeLiteral(w.accountId)), 'uuid'),
    '$2::text[]': array(wanted.map((w) => escapeLiteral(w.personId)), 'text'),
    '$3::bytea[]': array(wanted.map((w) => `'\\x${w.key.toString('hex')}'`), 'bytea'),
  };
  // In one pass: a value is never read again for placeholders (a person id may hold their text).
  return ensureKeys.replace(/\$1::uuid\[\]|\$2::text\[\]|\$3::bytea\[\]/g, (placeholder) => values[placeholder] as string);
}
