import type { Pool } from '../../src/db/pool.js';
import { inTransaction } from '../../src/db/transaction.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { neverAppends } from '../../src/eventstore/postgres-sql.js';
import type { Logger } from '../../src/logger.js';
import { dataErrorFields, storedError } from './apply-errors.js';
import { applyInSavepoint } from './parking.js';
import * as accountsSql from './accounts-sql.js';
import * as checkpointSql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import * as sql from './parked-sql.js';
import type { ParkedRow } from './parked-sql.js';
import type { Projection } from './projection.js';

export interface RetryResult {
  projection: string;
  /** Parked events tried again. */
  retried: number;
  /** Of those, the ones that applied now and are no longer parked. */
  applied: number;
  /** Still parked: they failed again (error and attempts updated). */
  stillParked: number;
}

/** A retry refused: the projection is being rebuilt. */
export class RebuildUnderWay extends Error {
  constructor(projection: string) {
    super(`a rebuild of ${projection} is under way: it parks again what it cannot apply; retry once it has finished`);
    this.name = 'RebuildUnderWay';
  }
}

const rebuildUnderWay = (row: CheckpointRow | undefined): boolean =>
  Boolean(row?.rebuild_requested_at || (row?.rebuild_started_at && !row.rebuild_finished_at));

/**
 * Applies the parked events of a projection again, in the order they were parked, each on top of
 * the rows as they are now (not where it stood in the store: later events were applied without
 * it). Those that apply are unparked; the others stay, with the new error. One transaction, holding
 * the cursors of the accounts concerned: their batches wait for it, and it for them.
 */
export async function retryParked(pool: Pool, store: EventStore, projection: Projection, log: Logger): Promise<RetryResult> {
  const name = projection.name;
  // Checked first without locking (a batch of the rebuild holds the row while it commits), then
  // again under the lock.
  const unlocked = (await pool.query<CheckpointRow>(checkpointSql.selectCheckpoint, [name])).rows[0];
  if (rebuildUnderWay(unlocked)) throw new RebuildUnderWay(name);
  const result: RetryResult = { projection: name, retried: 0, applied: 0, stillParked: 0 };
  return inTransaction(pool, async (client) => {
    await client.query(neverAppends);
    const checkpoint = (await client.query<CheckpointRow>(sql.lockCheckpoint, [name])).rows[0];
    if (rebuildUnderWay(checkpoint)) throw new RebuildUnderWay(name);
    // The cursors of the accounts concerned: their batches wait for the retry, and it for them.
    await client.query(sql.lockCursorsOfParked, [name]);
    const parked = (await client.query<ParkedRow>(sql.selectParked, [name])).rows;
    const appliedByAccount = new Map<string, number>();
    for (const row of parked) {
      result.retried += 1;
      const [event] = await store.readStream(row.stream_name, row.stream_position, 1);
      if (!event || event.id.toLowerCase() !== row.event_id.toLowerCase()) {
        await client.query(sql.failedAgain, [name, row.event_id, 'the event is no longer in the event store at its position', null]);
        result.stillParked += 1;
        continue;
      }
      const outcome = await applyInSavepoint(client, projection, [event]);
      if (outcome.applied) {
        await client.query(sql.unpark, [name, row.event_id]);
        result.applied += 1;
        const account = row.account_id ?? '';
        appliedByAccount.set(account, (appliedByAccount.get(account) ?? 0) + 1);
      } else {
        await client.query(sql.failedAgain, [name, row.event_id, ...storedError(outcome.error)]);
        log.warn({ projection: name, eventId: row.event_id, ...dataErrorFields(outcome.error) }, 'parked event failed again');
        result.stillParked += 1;
      }
    }
    for (const [account, applied] of appliedByAccount) await client.query(accountsSql.addToApplied, [name, account, applied]);
    return result;
  });
}
