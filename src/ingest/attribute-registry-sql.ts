/** SQL of the attribute type registry (table attribute_types). */

/** The registered types of some keys of an account. */
export const selectTypes = 'SELECT key, type FROM attribute_types WHERE account_id = $1 AND key = ANY($2::text[])';

/** Registers types of new keys; a key registered meanwhile keeps its first type. */
export const claimTypes = `INSERT INTO attribute_types (account_id, key, type)
  SELECT $1, k, t FROM unnest($2::text[], $3::text[]) AS u(k, t) ORDER BY k
  ON CONFLICT (account_id, key) DO NOTHING`;
