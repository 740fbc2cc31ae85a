import type { Pool } from '../db/pool.js';
import { claimMerge, selectMerge } from './identity-map-sql.js';

export type MergeClaim = { ok: true; mergeEventId: string } | { ok: false; mergedInto: string };

/** Which known user each anonymous id was merged into: at most one, for good. */
export class IdentityMap {
  constructor(private readonly pool: Pool) {}

  /**
   * Claims `anonymousId` for `userId`. A repeat of the same merge returns the event id of the first
   * one, so appending it again is an idempotent no-op (and completes a merge whose append failed).
   */
  async claim(accountId: string, anonymousId: string, userId: string, proposedEventId: string): Promise<MergeClaim> {
    await this.pool.query(claimMerge, [accountId, anonymousId, userId, proposedEventId]);
    const { rows } = await this.pool.query<{ user_id: string; merge_event_id: string }>(selectMerge, [accountId, anonymousId]);
    const row = rows[0];
    if (!row) throw new Error('identity merge claim vanished');
    return row.user_id === userId ? { ok: true, mergeEventId: row.merge_event_id } : { ok: false, mergedInto: row.user_id };
  }
}
