import pg from 'pg';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { eventsToApply } from '../../projections/runner/batch.js';
import type { Projection } from '../../projections/runner/projection.js';
import { freshDatabase } from './database.js';

/** Reads the read model after the events: plain queries on the spec's database. */
export type ReadModel = <Row extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<Row[]>;

/**
 * Given/when/then for one projection, without a worker: `given` events are applied as one batch,
 * each `when` as a batch of its own (so that rules across batch boundaries are exercised), each in a
 * transaction, on a database cloned from the migrated template; `then` reads the rows.
 *
 *   await projectionSpec(productsProjection)
 *     .given(submitted('p1', { color: 'red' }))
 *     .when(submitted('p1', { color: 'blue' }))
 *     .then(async (read) => expect(await read('SELECT properties FROM products')).to.deep.equal([...]));
 *
 * With `mayRepeatEventIds` each batch passes first through the runner's guard for stores that may
 * deliver an event id twice (EventStoreDB), as the runner applies it there.
 */
export function projectionSpec(projection: Projection, options: { mayRepeatEventIds?: boolean } = {}) {
  const batches: RecordedEvent[][] = [];
  const spec = {
    given(...events: RecordedEvent[]) {
      batches.push(events);
      return spec;
    },
    when(...events: RecordedEvent[]) {
      batches.push(events);
      return spec;
    },
    async then(check: (read: ReadModel) => Promise<void>): Promise<void> {
      const database = await freshDatabase();
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        for (const batch of batches) {
          await client.query('BEGIN');
          await projection.apply(client, await eventsToApply(client, projection, options.mayRepeatEventIds ?? false, batch, null));
          await client.query('COMMIT');
        }
        await check(async (text, values) => (await client.query(text, values)).rows);
      } finally {
        await client.end();
        await database.drop();
      }
    },
  };
  return spec;
}
