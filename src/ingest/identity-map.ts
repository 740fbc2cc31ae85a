import type { Pool } from '../db/pool.js';
import { claimMerge, selectMerge } from './identity-map-sql.js';

export type MergeClaim = { ok: true; mergeEventId: string } | { ok: false; mergedInto: string } | { ok: false; full: true };

/**
 * Anonymous ids one known user may take in merges: a profile is a device or a browser of a person,
 * and a user with more is no person but a shared or scripted id. Without a bound, an ingest token
 * could grow one lead (its row, its reply, its timeline's streams) without end.
 */
export const maxMergedIdsPerUser = 1_000;

/** Which known user each anonymous id was merged into: at most one, for good. */
export class IdentityMap {
  constructor(private readonly pool: Pool) {}

  /**
   * Claims `anonymousId` for `userId`. A repeat of the same merge returns the event id of the first
   * one, so appending it again is an idempotent no-op (and completes a merge whose append failed).
   * A user already holding `maxMergedIdsPerUser` ids takes no other.
   */
  async claim(accountId: string, anonymousId: string, userId: string, proposedEventId: string): Promise<MergeClaim> {
    await this.pool.query(claimMerge, [accountId, anonymousId, userId, proposedEventId, maxMergedIdsPerUser]);
    const { rows } = await this.pool.query<{ user_id: string; merge_event_id: string }>(selectMerge, [accountId, anonymousId]);
    const row = rows[0];
    if (!row) return { ok: false, full: true };
    return row.user_id === userId ? { ok: true, mergeEventId: row.merge_event_id } : { ok: false, mergedInto: row.user_id };
  }
}
