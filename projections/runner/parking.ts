import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Logger } from '../../src/logger.js';
import { dataErrorFields, isDataError, messageOf, sqlstateOf } from './apply-errors.js';
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
    messageOf(error).slice(0, 2_000),
    sqlstateOf(error),
  ]);
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
      await db.query('SAVEPOINT isolate');
      try {
        await projection.apply(db, part);
        await db.query('RELEASE SAVEPOINT isolate');
        return;
      } catch (error) {
        if (!isDataError(error)) throw error;
        await db.query('ROLLBACK TO SAVEPOINT isolate');
        await db.query('RELEASE SAVEPOINT isolate');
        if (part.length === 1) {
          const [event] = part as [RecordedEvent];
          await parkEvent(db, projection, event, error);
          log.warn({ eventId: event.id, eventType: event.type, globalPosition: event.globalPosition, ...dataErrorFields(error) }, 'event parked: the projection cannot apply it');
          parked.push(event);
          return;
        }
      }
    }
    const half = Math.ceil(part.length / 2);
    await isolate(part.slice(0, half), false);
    await isolate(part.slice(half), false);
  };
  await isolate(events, events.length > 1);
  return parked;
}
