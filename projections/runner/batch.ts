import type pg from 'pg';
import type { ReadAllResult, RecordedEvent } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import { dataErrorFields, isDataError } from './apply-errors.js';
import * as sql from './checkpoints-sql.js';
import type { CheckpointRow } from './checkpoints-sql.js';
import { applyParkingPoison } from './parking.js';
import type { Projection } from './projection.js';

export interface BatchOutcome {
  /** The checkpoint row after the batch. */
  state: CheckpointRow;
  applied: number;
  parked: number;
}

/**
 * Applies a page read from `state`'s checkpoint and moves the checkpoint past it, in one
 * transaction; null when the checkpoint had moved meanwhile (nothing applied). A batch that fails on
 * a data error is rolled back and applied again, this time leaving out (parking) the events that
 * cannot be applied: the happy path pays for no savepoint. Other errors are thrown.
 */
export async function applyPage(
  client: pg.PoolClient,
  projection: Projection,
  mayRepeatEventIds: boolean,
  state: CheckpointRow,
  page: ReadAllResult,
  log: Logger,
): Promise<BatchOutcome | null> {
  const batch = { client, projection, mayRepeatEventIds, state, page };
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
 * The batch's transaction. The checkpoint is moved first: its row then stays locked until the
 * commit, which keeps a retry of parked events from interleaving with the batch.
 */
async function commitBatch(
  batch: { client: pg.PoolClient; projection: Projection; mayRepeatEventIds: boolean; state: CheckpointRow; page: ReadAllResult },
  apply: (events: RecordedEvent[]) => Promise<RecordedEvent[]>,
): Promise<BatchOutcome | null> {
  const { client, projection, state, page } = batch;
  await client.query('BEGIN');
  try {
    // The rows and the checkpoint commit together, so a batch lost in a database crash is lost
    // whole and applied again from the older checkpoint: no need to wait for the WAL flush.
    await client.query('SET LOCAL synchronous_commit = off');
    // A parked event's id stays claimed: parked counts as handled, and a second delivery of it is
    // skipped like that of an applied one (a retry applies it without claiming it again).
    const events = await eventsToApply(client, projection, batch.mayRepeatEventIds, page.events);
    const { rows } = await client.query<CheckpointRow>(sql.advanceCheckpoint, [projection.name, state.checkpoint, page.checkpoint, events.length]);
    let advanced = rows[0];
    if (!advanced) {
      await client.query('ROLLBACK');
      return null;
    }
    const parked = await apply(events);
    if (parked.length) advanced = (await client.query<CheckpointRow>(sql.addToApplied, [projection.name, -parked.length])).rows[0] ?? advanced;
    await client.query('COMMIT');
    return { state: advanced, applied: events.length - parked.length, parked: parked.length };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * The events of a page the projection is to apply: on a store that may deliver an event id more
 * than once, those whose ids it has not applied (nor parked) before, each once, in order, unless
 * its rows are keyed by event id anyway; otherwise all of them. Runs in the batch's transaction.
 */
export async function eventsToApply(client: pg.ClientBase, projection: Projection, mayRepeatEventIds: boolean, events: RecordedEvent[]): Promise<RecordedEvent[]> {
  return mayRepeatEventIds && !projection.keyedByEventId ? firstDeliveries(client, projection, events) : events;
}

/** The events whose ids the projection has not applied (nor parked) before, each once, in order. */
async function firstDeliveries(client: pg.ClientBase, projection: Projection, events: RecordedEvent[]): Promise<RecordedEvent[]> {
  if (events.length === 0) return events;
  const { rows } = await client.query<{ event_id: string }>(sql.claimEventIds, [projection.name, events.map((e) => e.id)]);
  const unseen = new Set(rows.map((row) => row.event_id));
  return events.filter((event) => unseen.delete(event.id.toLowerCase()));
}
