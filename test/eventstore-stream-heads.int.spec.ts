import { expect } from 'chai';
import { createPool, type Pool } from '../src/db/pool.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { opaqueEvent as event } from './support/opaque-events.js';


/** The append statements sent on `pool`'s connections, and the connections it opened. */
function countAppends(pool: Pool): { statements: number; connections: number } {
  const counts = { statements: 0, connections: 0 };
  pool.on('connect', (client) => {
    counts.connections += 1;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    Object.assign(client, {
      query: (...args: unknown[]) => {
        const text = (args[0] as { text?: unknown }).text;
        if (typeof text === 'string' && text.includes('append_events')) counts.statements += 1;
        return query(...args);
      },
    });
  });
  return counts;
}

describe('Postgres event store: remembered stream heads (int)', () => {
  let database: TestDatabase;
  let pools: Pool[];
  let stores: PostgresEventStore[];

  beforeEach(async () => {
    database = await freshDatabase();
    pools = [createPool(database.url), createPool(database.url)];
    stores = pools.map((pool) => new PostgresEventStore(pool));
  });
  afterEach(async () => {
    for (const store of stores) await store.close();
    for (const pool of pools) await pool.end();
    await database.drop();
  });

  it('a head another process has passed is looked up again: positions stay gap-free and the batch atomic', async () => {
    const [one, two] = stores as [PostgresEventStore, PostgresEventStore];
    await one.append([event('h-1'), event('h-1')]);
    await two.append([event('h-1'), event('h-1'), event('h-1')]);
    // One remembers h-1 at 1; it is at 4. The batch also carries a stream One knows correctly and a new one.
    await one.append([event('h-2')]);
    const batch = [event('h-2'), event('h-1'), event('h-3'), event('h-1')];
    const appended = await one.append(batch);
    expect(appended.map((e) => [e.stream, e.streamPosition, e.duplicate])).to.deep.equal([
      ['h-2', 1, false],
      ['h-1', 5, false],
      ['h-3', 0, false],
      ['h-1', 6, false],
    ]);
    // Remembered again, correctly this time; the other store's head is now behind.
    expect((await one.append([event('h-1')]))[0]?.streamPosition).to.equal(7);
    expect((await two.append([event('h-1')]))[0]?.streamPosition).to.equal(8);
    for (const [stream, length] of [['h-1', 9], ['h-2', 2], ['h-3', 1]] as const) {
      expect((await one.readStream(stream)).map((e) => e.streamPosition)).to.deep.equal([...Array(length).keys()]);
    }
  });

  it('a repeated id in a batch with remembered heads is stored once, and the head stays right', async () => {
    const [one] = stores as [PostgresEventStore];
    const first = event('d-1');
    await one.append([first, event('d-1')]);
    const again = await one.append([event('d-1'), first, event('d-1')]);
    expect(again.map((e) => [e.streamPosition, e.duplicate])).to.deep.equal([
      [2, false],
      [0, true],
      [3, false],
    ]);
    expect((await one.append([event('d-1')]))[0]?.streamPosition).to.equal(4);
  });

  it('with no heads remembered, every head is looked up', async () => {
    const pool = createPool(database.url);
    const forgetful = new PostgresEventStore(pool, { streamHeadsKept: 0 });
    try {
      await (stores[0] as PostgresEventStore).append([event('n-1')]);
      expect((await forgetful.append([event('n-1'), event('n-1')])).map((e) => e.streamPosition)).to.deep.equal([1, 2]);
    } finally {
      await forgetful.close();
      await pool.end();
    }
  });
  it('appends of one process in flight at once to one stream are stored in the order sent, each written once', async () => {
    const pool = createPool(database.url);
    pools.push(pool);
    // Every append statement sent, and every batch committed: a statement more is a batch written again.
    const sent = countAppends(pool);
    let committed = 0;
    const store = new PostgresEventStore(pool, { maxConcurrentFlushes: 4, onBatch: () => (committed += 1) });
    stores.push(store);
    // The first appends look the head up; those after pass the head the process remembers.
    for (let wave = 0; wave < 3; wave += 1) {
      const appended = await Promise.all(Array.from({ length: 20 }, (_, i) => store.append([event('hot'), event(`cold-${wave}-${i}`)])));
      expect(appended.map((events) => events[0]?.streamPosition)).to.deep.equal(Array.from({ length: 20 }, (_, i) => wave * 20 + i));
    }
    expect((await store.readStream('hot')).map((e) => e.streamPosition)).to.deep.equal([...Array(60).keys()]);
    expect(sent.statements).to.equal(committed);
  });

  it('another writer passing a head costs one batch written again, not a connection, and heads go unused for a while', async () => {
    const pool = createPool(database.url);
    pools.push(pool);
    const sent = countAppends(pool);
    let committed = 0;
    const one = new PostgresEventStore(pool, { onBatch: () => (committed += 1) });
    stores.push(one);
    const other = stores[1] as PostgresEventStore;
    await one.append([event('c-1')]);
    await other.append([event('c-1')]);
    // One's remembered head (0) is behind: its batch collides once and is written again on the same connection.
    expect((await one.append([event('c-1')]))[0]?.streamPosition).to.equal(2);
    expect(sent).to.deep.equal({ statements: committed + 1, connections: 1 });
    // The other writer is still at it: One looks heads up instead of colliding again.
    await other.append([event('c-1')]);
    expect((await one.append([event('c-1'), event('c-2')])).map((e) => e.streamPosition)).to.deep.equal([4, 0]);
    expect(sent).to.deep.equal({ statements: committed + 1, connections: 1 });
    expect((await one.readStream('c-1')).map((e) => e.streamPosition)).to.deep.equal([0, 1, 2, 3, 4]);
  });
});
