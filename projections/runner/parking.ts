import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import { dataErrorFields, isDataError, storedError } from './apply-errors.js';
import * as sql from './parked-sql.js';
import type { Db, Projection } from './projection.js';

/** Parks an event the projection cannot apply, in the transaction of `db`; of the error, it keeps the SQLSTATE and message, not PostgreSQL's detail. */
export async function parkEvent(db: Db, projection: Projection, event: RecordedEvent, error: unknown): Promise<void> {
  await db.query(sql.park, [
    projection.name,
    event.id,
    event.stream,
    event.streamPosition,
    event.globalPosition,
    event.type,
    typeof event.metadata.accountId === 'string' ? event.metadata.accountId : null,
    ...storedError(error),
  ]);
}

/**
 * Applies `events` in a savepoint of `db`'s transaction. On a data error their changes are undone
 * and the error returned; any other error is thrown (the caller's transaction is then lost).
 */
export async function applyInSavepoint(db: Db, projection: Projection, events: RecordedEvent[]): Promise<{ applied: true } | { applied: false; error: unknown }> {
  await db.query('SAVEPOINT apply_part');
  try {
    await projection.apply(db, events);
    await db.query('RELEASE SAVEPOINT apply_part');
    return { applied: true };
  } catch (error) {
    if (!isDataError(error)) throw error;
    await db.query('ROLLBACK TO SAVEPOINT apply_part');
    await db.query('RELEASE SAVEPOINT apply_part');
    return { applied: false, error };
  }
}

/**
 * Applies `events`, which failed together on a data error, in the caller's transaction, leaving out
 * the events that cannot be applied: halves are applied in savepoints, and a half that fails is
 * split again down to single events, which are parked. Every other event is applied once, in
 * order. A poison event among n costs about 2·log2(n) applies; a transient error ends it all
 * (thrown), and the caller's transaction is rolled back. Returns the events parked.
 */
export async function applyParkingPoison(db: Db, projection: Projection, events: RecordedEvent[], log: Logger): Promise<RecordedEvent[]> {
  const parked: RecordedEvent[] = [];
  const isolate = async (part: RecordedEvent[], knownToFail: boolean): Promise<void> => {
    if (part.length === 0) return;
    if (!knownToFail) {
      const outcome = await applyInSavepoint(db, projection, part);
      if (outcome.applied) return;
      if (part.length === 1) {
        const [event] = part as [RecordedEvent];
        await parkEvent(db, projection, event, outcome.error);
        log.warn({ eventId: event.id, eventType: event.type, globalPosition: event.globalPosition, ...dataErrorFields(outcome.error) }, 'event parked: the projection cannot apply it');
        parked.push(event);
        return;
      }
    }
    const half = Math.ceil(part.length / 2);
    await isolate(part.slice(0, half), false);
    await isolate(part.slice(half), false);
  };
  await isolate(events, events.length > 1);
  return parked;
}
