import type pg from 'pg';
import { inTransactionOn } from '../../src/db/transaction.js';
import type { ReadAllResult, RecordedEvent } from '../../src/eventstore/port.js';
import { neverAppends } from '../../src/eventstore/postgres-sql.js';
import type { Logger } from '../../src/logger.js';
import * as accountsSql from './accounts-sql.js';
import { dataErrorFields, isDataError } from './apply-errors.js';
import type { Claim } from './claims.js';
import * as claimsSql from './claims-sql.js';
import * as sql from './checkpoints-sql.js';
import { applyParkingPoison } from './parking.js';
import type { Projection } from './projection.js';

/** Where a batch was read from, and under which claim it may commit. */
export interface BatchCursor {
  accountId: string;
  checkpoint: string | null;
  /** The claim on the account's part, checked in the batch's transaction; null: no fence (a rebuild run alone). */
  claim: (Claim & { workerId: string }) | null;
}

export type BatchOutcome =
  | { committed: true; checkpoint: string | null; applied: number; parked: number }
  /** Nothing applied: the cursor had moved (`moved`), or the claim was gone (`fenced`). */
  | { committed: false; reason: 'moved' | 'fenced' };

/**
 * Applies a page of one account, read from `cursor`, and moves the account's cursor past it, in one
 * transaction that commits only while the claim still holds. A batch that fails on a data error is
 * rolled back and applied again, this time leaving out (parking) the events that cannot be applied:
 * the happy path pays for no savepoint. Other errors are thrown.
 */
export async function applyPage(
  client: pg.PoolClient,
  projection: Projection,
  mayRepeatEventIds: boolean,
  cursor: BatchCursor,
  page: ReadAllResult,
  log: Logger,
): Promise<BatchOutcome> {
  const batch = { client, projection, mayRepeatEventIds, cursor, page };
  try {
    return await commitBatch(batch, async (events) => {
      await projection.apply(client, events);
      return [];
    });
  } catch (error) {
    if (!isDataError(error)) throw error;
    log.warn({ ...dataErrorFields(error), events: page.events.length }, 'batch failed on a data error; applying it again without the events that cannot be applied');
    return commitBatch(batch, (events) => applyParkingPoison(client, projection, events, log));
  }
}

/**
 * The batch's transaction. The cursor is moved first: its row then stays locked until the commit,
 * which keeps a retry of parked events from interleaving with the batch. The fence comes last, just
 * before the commit, and share-locks the part: a worker that lost its claim while applying (a pause,
 * a cut network) commits nothing, and none can claim the part between the fence and the commit.
 */
async function commitBatch(
  batch: { client: pg.PoolClient; projection: Projection; mayRepeatEventIds: boolean; cursor: BatchCursor; page: ReadAllResult },
  apply: (events: RecordedEvent[]) => Promise<RecordedEvent[]>,
): Promise<BatchOutcome> {
  const { client, projection, cursor, page } = batch;
  const { accountId } = cursor;
  // The rows and the cursor commit together, so a batch lost in a database crash is lost whole
  // and applied again from the older cursor: no need to wait for the WAL flush. It never appends
  // events: catch-up reads of every account need not wait for it. One round trip for the three.
  const begin = `BEGIN; SET LOCAL synchronous_commit = off; ${neverAppends}`;
  return inTransactionOn(
    client,
    async (): Promise<BatchOutcome> => {
      const events = await eventsToApply(client, projection, batch.mayRepeatEventIds, page.events, accountId);
      const { rowCount } = await client.query(accountsSql.advanceCursor, [projection.name, accountId, cursor.checkpoint, page.checkpoint, events.length]);
      if (!rowCount) return { committed: false, reason: 'moved' };
      const parked = await apply(events);
      if (parked.length) await client.query(accountsSql.addToApplied, [projection.name, accountId, -parked.length]);
      if (cursor.claim) {
        const { claim } = cursor;
        const held = await client.query(claimsSql.fence, [claim.workerId, claim.part, claim.epoch]);
        if (!held.rowCount) return { committed: false, reason: 'fenced' };
      }
      return { committed: true, checkpoint: page.checkpoint, applied: events.length - parked.length, parked: parked.length };
    },
    { begin, commits: (outcome) => outcome.committed },
  );
}

/**
 * The events of a page the projection is to apply: on a store that may deliver an event id more
 * than once, those whose ids it has not applied (nor parked) before, each once, in order, unless
 * its rows are keyed by event id anyway; otherwise all of them. Runs in the batch's transaction.
 */
export async function eventsToApply(client: pg.ClientBase, projection: Projection, mayRepeatEventIds: boolean, events: RecordedEvent[], accountId: string | null): Promise<RecordedEvent[]> {
  return mayRepeatEventIds && !projection.keyedByEventId ? firstDeliveries(client, projection, events, accountId) : events;
}

/** The events whose ids the projection has not applied (nor parked) before, each once, in order. */
async function firstDeliveries(client: pg.ClientBase, projection: Projection, events: RecordedEvent[], accountId: string | null): Promise<RecordedEvent[]> {
  if (events.length === 0) return events;
  const { rows } = await client.query<{ event_id: string }>(sql.claimEventIds, [projection.name, events.map((e) => e.id), accountId]);
  const unseen = new Set(rows.map((row) => row.event_id));
  return events.filter((event) => unseen.delete(event.id.toLowerCase()));
}
