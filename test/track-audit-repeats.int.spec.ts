import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createPool, type Pool } from '../src/db/pool.js';
import { schemaVersion, streams, type TrackingEvent } from '../src/eventstore/events.js';
import type { NewEvent } from '../src/eventstore/port.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { createLogger } from '../src/logger.js';
import { projections } from '../projections/index.js';
import { eventsBehind } from '../projections/runner/status.js';
import { ProjectionWorker, type WorkerStore } from '../projections/runner/worker.js';
import { describeEvent, lookupPageJson, planTrackLookup, readLookupPage } from '../projections/track-index/queries.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { until } from './support/eventually.js';
import { testRefs } from './support/ingest-doubles.js';

interface StoredAt {
  stream: string;
  streamPosition: number;
  globalPosition: number;
  recordedAt: string;
}

interface AuditedEvent {
  eventId: string;
  streamPosition: number;
  globalPosition: number;
  alsoStoredAt?: StoredAt[];
  repeatOf?: StoredAt;
}

interface AuditReply {
  events: AuditedEvent[];
  streams: Record<string, AuditedEvent[]>;
}

/**
 * An event id stored twice, on PostgreSQL through the store port: the copy is inserted the way
 * EventStoreDB stores a repeat it no longer recognises (same id, next position of its stream), and
 * the projection workers read through a source that says ids may repeat, as that store does.
 */
describe('an event id stored twice: read models and audit (int)', () => {
  const accountId = randomUUID();
  const userStream = streams.user(accountId, testRefs(accountId).user('u-1'));
  const productStream = streams.product(accountId, 'p-1');
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 10, 5_000);
    // No remembered stream heads: the copies below are written past the store's back.
    store = new PostgresEventStore(pool, { streamHeadsKept: 0 });
  });
  afterEach(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });

  const event = (stream: string, body: TrackingEvent): NewEvent => {
    const id = randomUUID();
    return { ...body, id, stream, metadata: { trackId: id, accountId, receivedAt: new Date().toISOString(), schemaVersion } };
  };
  const upserted = (profile: Record<string, string>): NewEvent =>
    event(userStream, { type: 'UserUpserted', data: { userId: 'u-1', profile, attributes: {}, attributeTypes: {}, instants: {} } });
  const tracked = (): NewEvent =>
    event(userStream, { type: 'EventTracked', data: { userId: 'u-1', eventName: 'login', eventTime: null, eventTimeUtc: new Date().toISOString(), eventData: {} } });
  const submitted = (color: string): NewEvent => event(productStream, { type: 'ProductSubmitted', data: { productId: 'p-1', properties: { color } } });
  const viewed = (): NewEvent =>
    event(productStream, {
      type: 'ProductEventTracked',
      data: { productId: 'p-1', userId: null, eventName: 'view', eventTime: null, eventTimeUtc: new Date().toISOString(), eventData: {} },
    });

  /** Stores `id` again at the next position of its stream, as a store whose deduplication missed it. */
  const storeAgain = async (id: string): Promise<void> => {
    await pool.query('ALTER TABLE events DROP CONSTRAINT IF EXISTS events_event_id_key');
    await pool.query(
      `INSERT INTO events (stream_name, stream_position, event_id, event_type, data, metadata)
       SELECT stream_name, (SELECT max(h.stream_position) + 1 FROM events h WHERE h.stream_name = e.stream_name), event_id, event_type, data, metadata
       FROM events e WHERE event_id = $1 ORDER BY global_position LIMIT 1`,
      [id],
    );
  };

  /** The audit of a trackID as the read API sends it (JSON). */
  const audited = async (trackId: string, of: string | null): Promise<AuditReply> => {
    const plan = await planTrackLookup(pool, trackId, of);
    if (!plan) throw new Error(`trackID ${trackId} not indexed`);
    const page = await readLookupPage(pool, store, plan, { offset: 0, budget: 2 ** 20, show: describeEvent });
    return JSON.parse(JSON.stringify(lookupPageJson(page))) as AuditReply;
  };

  /** Runs every projection over the store until each has applied everything. */
  const project = async (): Promise<void> => {
    const source: WorkerStore = {
      mayRepeatEventIds: true,
      readAll: (checkpoint, limit, filter) => store.readAll(checkpoint, limit, filter),
      backlog: (checkpoint, filter) => store.backlog(checkpoint, filter),
      scanAccounts: (checkpoint, limit) => store.scanAccounts(checkpoint, limit),
      comparePositions: (a, b) => store.comparePositions(a, b),
    };
    const worker = new ProjectionWorker({ pool, store: source, log: createLogger('silent'), pollMs: 20, projections }).start();
    try {
      let behind = 0;
      await until(async () => (behind = await eventsBehind(pool, store)) === 0, 10_000, () => `projections still ${behind} events behind`);
    } finally {
      await worker.stop();
    }
  };

  it('counts each id once in leads, user events and products, and the audit shows it once with where the later copy is', async () => {
    const ann = upserted({ firstName: 'Ann' });
    const login = tracked();
    const red = submitted('red');
    const view = viewed();
    for (const e of [ann, upserted({ firstName: 'Anna' }), login, red, submitted('blue'), view]) await store.append([e]);
    await storeAgain(ann.id);
    await storeAgain(login.id);
    await storeAgain(red.id);
    await storeAgain(view.id);
    const lee = upserted({ lastName: 'Lee' });
    await store.append([lee]);
    await project();

    const leads = await pool.query('SELECT first_name, last_name, version FROM leads');
    expect(leads.rows).to.deep.equal([{ first_name: 'Anna', last_name: 'Lee', version: 3 }]);
    expect((await pool.query('SELECT event_id FROM user_events')).rows).to.deep.equal([{ event_id: login.id }]);
    expect((await pool.query('SELECT properties, version FROM products')).rows).to.deep.equal([{ properties: { color: 'blue' }, version: 2 }]);
    expect((await pool.query('SELECT event_id FROM product_events')).rows).to.deep.equal([{ event_id: view.id }]);
    expect((await pool.query('SELECT count(*)::int AS n FROM track_index')).rows).to.deep.equal([{ n: 7 }]);

    // Stream u-1: 0 ann, 1 anna, 2 login, 3 ann again, 4 login again, 5 lee.
    const audit = await audited(ann.metadata.trackId, accountId);
    expect(audit.events.map((e) => [e.eventId, e.streamPosition])).to.deep.equal([[ann.id, 0]]);
    const copies = audit.events[0]?.alsoStoredAt ?? [];
    expect(copies.map((c) => [c.stream, c.streamPosition])).to.deep.equal([[userStream, 3]]);
    expect(copies[0]?.globalPosition).to.be.greaterThan(audit.events[0]?.globalPosition ?? Infinity);

    const ofLee = await audited(lee.id, null);
    expect(ofLee.events.map((e) => e.alsoStoredAt ?? null)).to.deep.equal([null]);
    const stream = ofLee.streams[userStream] ?? [];
    expect(stream.map((e) => [e.streamPosition, e.eventId, e.alsoStoredAt?.map((c) => c.streamPosition) ?? null, e.repeatOf?.streamPosition ?? null])).to.deep.equal([
      [0, ann.id, [3], null],
      [1, stream[1]?.eventId, null, null],
      [2, login.id, [4], null],
      [3, ann.id, null, 0],
      [4, login.id, null, 2],
      [5, lee.id, null, null],
    ]);
  });
});
