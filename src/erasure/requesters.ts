import type { Pool } from '../db/pool.js';

/** The access token an erasure was requested with, as the API shows it: named by its label. */
export interface RequestingToken {
  id: string;
  /** As its owner typed it: text, never markup. */
  label: string;
  /** When it was revoked; null while active. Revoked tokens keep their label. */
  revokedAt: string | null;
}

/** What `requested_by` holds for a request made with an access token (src/http/auth.ts, the caller). */
const byToken = /^access token ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The token id of a `requestedBy`, or null when it names no access token. */
export const tokenIdOf = (requestedBy: string): string | null => byToken.exec(requestedBy)?.[1] ?? null;

/** Tokens $2 of account $1, revoked ones too (a token is revoked, never deleted). */
const tokensOfAccount = 'SELECT id, label, revoked_at FROM access_tokens WHERE account_id = $1 AND id = ANY($2::uuid[])';

/**
 * The access tokens that the `requestedBy` texts name, by id, in one query: those of another
 * account, or no longer stored, are left out.
 */
export async function requestingTokens(pool: Pool, accountId: string, requestedBy: string[]): Promise<Map<string, RequestingToken>> {
  const ids = [...new Set(requestedBy.map(tokenIdOf).filter((id) => id !== null))];
  if (ids.length === 0) return new Map();
  const { rows } = await pool.query<{ id: string; label: string; revoked_at: Date | null }>(tokensOfAccount, [accountId, ids]);
  return new Map(rows.map((row) => [row.id, { id: row.id, label: row.label, revokedAt: row.revoked_at?.toISOString() ?? null }]));
}
