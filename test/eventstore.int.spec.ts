import { expect } from 'chai';
import { createPool, type Pool } from '../src/db/pool.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import { appendEvents } from '../src/eventstore/postgres-sql.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { opaqueEvent as event } from './support/opaque-events.js';


async function readEverything(store: PostgresEventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  let checkpoint: string | null = null;
  for (;;) {
    const page = await store.readAll(checkpoint, 500);
    if (page.events.length === 0) return all;
    all.push(...page.events);
    checkpoint = page.checkpoint;
  }
}

describe('Postgres event store (int)', () => {
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url);
    store = new PostgresEventStore(pool);
  });
  afterEach(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });

  it('appends a unit atomically and in order, and reads the stream back', async () => {
    const [a, b] = [event('s-1'), event('s-1')];
    const appended = await store.append([a, b]);
    expect(appended.map((e) => [e.id, e.streamPosition, e.duplicate])).to.deep.equal([
      [a.id, 0, false],
      [b.id, 1, false],
    ]);
    const read = await store.readStream('s-1');
    expect(read.map((e) => e.id)).to.deep.equal([a.id, b.id]);
    expect(read[0]?.metadata).to.deep.equal(a.metadata);
    expect(read[0]?.data).to.deep.equal(a.data);
  });

  it('stores an event id once: a repeated append is an idempotent success', async () => {
    const e = event('s-dup');
    const first = await store.append([e]);
    const again = await store.append([e, event('s-dup')]);
    expect(again[0]).to.deep.include({ id: e.id, duplicate: true, streamPosition: first[0]?.streamPosition });
    expect(again[1]).to.deep.include({ duplicate: false, streamPosition: 1 });
    const concurrent = await Promise.all([store.append([event('s-dup', 'a0000000-0000-4000-8000-000000000001')]), store.append([event('s-dup', 'a0000000-0000-4000-8000-000000000001')])]);
    expect(concurrent.flat().filter((r) => !r.duplicate)).to.have.length(1);
    const stored = await store.readStream('s-dup');
    expect(stored.map((r) => r.streamPosition)).to.deep.equal([0, 1, 2]);
  });

  it('keeps stream positions gap-free and in append order with two writers on separate pools', async () => {
    const otherPool = createPool(database.url);
    const other = new PostgresEventStore(otherPool);
    const streams = ['p-a', 'p-b', 'p-c'];
    const writer = async (target: PostgresEventStore, tag: string) => {
      const ids: string[] = [];
      for (let i = 0; i < 60; i += 1) {
        // Several units in flight per writer, each on a different stream, so batches interleave.
        const batch = streams.map((s) => event(s));
        ids.push(...batch.map((e) => `${tag}:${e.stream}:${e.id}`));
        await Promise.all(batch.map((e) => target.append([e])));
      }
      return ids;
    };
    try {
      const [ours, theirs] = await Promise.all([writer(store, 'one'), writer(other, 'two')]);
      for (const stream of streams) {
        const recorded = await store.readStream(stream);
        expect(recorded.map((e) => e.streamPosition)).to.deep.equal([...Array(120).keys()]);
        const position = new Map(recorded.map((e) => [e.id, e.streamPosition]));
        for (const ids of [ours, theirs]) {
          const mine = ids.filter((entry) => entry.includes(`:${stream}:`)).map((entry) => position.get(entry.split(':')[2] as string) as number);
          expect(mine).to.deep.equal([...mine].sort((x, y) => x - y), `append order of one writer on ${stream}`);
        }
      }
    } finally {
      await other.close();
      await otherPool.end();
    }
  });

  it('group commit: concurrent appends share transactions and each resolves only once durable', async () => {
    const observer = createPool(database.url, 2);
    try {
      const events = Array.from({ length: 200 }, (_, i) => event(`g-${i % 10}`));
      const visibleAtResolve = await Promise.all(
        events.map(async (e) => {
          await store.append([e]);
          const { rowCount } = await observer.query('SELECT 1 FROM events WHERE event_id = $1', [e.id]);
          return rowCount === 1;
        }),
      );
      expect(visibleAtResolve.every(Boolean)).to.equal(true);
      const { rows } = await pool.query<{ transactions: number }>('SELECT count(DISTINCT transaction_id)::int AS transactions FROM events');
      expect(rows[0]?.transactions).to.be.below(100);
    } finally {
      await observer.end();
    }
  });

  it('catch-up read never skips an event whose transaction commits late', async () => {
    await store.append([event('early')]);
    const slow = await pool.connect();
    try {
      await slow.query('BEGIN');
      const late = event('late');
      await slow.query(appendEvents([late], false));
      const quick = event('quick');
      await store.append([quick]);

      // The quick event got the higher global position but committed first: a plain
      // `global_position > cursor` reader would move past the late one and never see it.
      const own = await slow.query<{ global_position: number }>('SELECT global_position FROM events WHERE event_id = $1', [late.id]);
      const { rows } = await pool.query<{ global_position: number }>('SELECT global_position FROM events WHERE event_id = $1', [quick.id]);
      expect(rows[0]?.global_position).to.be.greaterThan(own.rows[0]?.global_position as number);

      const first = await store.readAll(null, 100);
      expect(first.events.map((e) => e.stream)).to.deep.equal(['early']);

      await slow.query('COMMIT');
      const rest = await store.readAll(first.checkpoint, 100);
      expect(rest.events.map((e) => e.id)).to.deep.equal([late.id, quick.id]);
      const none = await store.readAll(rest.checkpoint, 100);
      expect(none.events).to.have.length(0);
      expect(none.checkpoint).to.equal(rest.checkpoint);
    } finally {
      slow.release();
    }
  });

  it('catch-up read returns every event exactly once under concurrent writers', async () => {
    const otherPool = createPool(database.url);
    const other = new PostgresEventStore(otherPool);
    try {
      const seen: string[] = [];
      let checkpoint: string | null = null;
      let writing = true;
      const written = Promise.all(
        [store, other].map(async (target) => {
          for (let i = 0; i < 40; i += 1) await Promise.all([0, 1, 2, 3, 4].map((j) => target.append([event(`c-${j}`)])));
        }),
      ).finally(() => {
        writing = false;
      });
      while (writing) {
        const page = await store.readAll(checkpoint, 50);
        seen.push(...page.events.map((e) => e.id));
        checkpoint = page.checkpoint;
      }
      await written;
      for (;;) {
        const page = await store.readAll(checkpoint, 500);
        if (page.events.length === 0) break;
        seen.push(...page.events.map((e) => e.id));
        checkpoint = page.checkpoint;
      }
      const all = await readEverything(store);
      expect(all).to.have.length(400);
      expect(new Set(seen).size).to.equal(seen.length);
      expect([...seen].sort()).to.deep.equal(all.map((e) => e.id).sort());
    } finally {
      await other.close();
      await otherPool.end();
    }
  });
});
