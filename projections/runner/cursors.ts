import type pg from 'pg';
import type { EventStore } from '../../src/eventstore/port.js';
import * as sql from './accounts-sql.js';
import type { AccountCheckpointRow } from './accounts-sql.js';

export interface Cursor {
  checkpoint: string | null;
  /** Whether it has found nothing more to read since it was made (a rebuild's end waits for every cursor's). */
  caughtUp: boolean;
}

/**
 * This worker's copy of the accounts' cursors, read once and then kept as its batches move them.
 * A copy goes stale when another worker or a rebuild moves the cursor: the batch's compare-and-set
 * then fails, and the copy is forgotten and read again.
 */
export class CursorCache {
  private readonly cursors = new Map<string, Cursor>();

  constructor(private readonly store: Pick<EventStore, 'comparePositions'>) {}

  private static key(projection: string, accountId: string): string {
    return `${projection}\u0000${accountId}`;
  }

  async get(client: pg.ClientBase, projection: string, accountId: string): Promise<Cursor> {
    const key = CursorCache.key(projection, accountId);
    const kept = this.cursors.get(key);
    if (kept) return kept;
    let row = (await client.query<AccountCheckpointRow>(sql.selectCursor, [projection, accountId])).rows[0];
    if (!row) {
      await client.query(sql.createCursor, [projection, accountId, await this.start(client, projection, accountId)]);
      row = (await client.query<AccountCheckpointRow>(sql.selectCursor, [projection, accountId])).rows[0];
    }
    const cursor: Cursor = { checkpoint: row?.checkpoint ?? null, caughtUp: row?.caught_up_at != null };
    this.cursors.set(key, cursor);
    return cursor;
  }

  /** Where a new cursor starts: before the account's first event, and not before what the projection has applied of every account. */
  private async start(client: pg.ClientBase, projection: string, accountId: string): Promise<string | null> {
    const { rows } = await client.query<{ first_checkpoint: string | null; applied_before: string | null }>(sql.cursorStart, [projection, accountId]);
    const first = rows[0]?.first_checkpoint ?? null;
    const appliedBefore = rows[0]?.applied_before ?? null;
    return this.store.comparePositions(first, appliedBefore) >= 0 ? first : appliedBefore;
  }

  /** The copy kept, if any, without reading. */
  peek(projection: string, accountId: string): Cursor | undefined {
    return this.cursors.get(CursorCache.key(projection, accountId));
  }

  forget(projection: string, accountId: string): void {
    this.cursors.delete(CursorCache.key(projection, accountId));
  }

  forgetProjection(projection: string): void {
    for (const key of this.cursors.keys()) if (key.startsWith(`${projection}\u0000`)) this.cursors.delete(key);
  }

  forgetAccount(accountId: string): void {
    for (const key of this.cursors.keys()) if (key.endsWith(`\u0000${accountId}`)) this.cursors.delete(key);
  }
}
