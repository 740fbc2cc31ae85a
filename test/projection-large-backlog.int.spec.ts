import { expect } from 'chai';
import { createPool, type Pool } from '../src/db/pool.js';
import { PersonKeys } from '../src/eventstore/person-keys.js';
import { defaultPageBytes, type EventStore, type ReadAllResult, type ReadFilter } from '../src/eventstore/port.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { Pseudonyms } from '../src/eventstore/pseudonyms.js';
import { SealedEventStore } from '../src/eventstore/sealed-store.js';
import { createLogger } from '../src/logger.js';
import { projections, ProjectionWorker } from '../projections/index.js';
import { eventsBehind } from '../projections/runner/status.js';
import { TestApp, type Credentials } from './support/app.js';
import { eventually } from './support/eventually.js';
import { bulkResults } from './support/replies.js';

/** The PostgreSQL adapter, counting the events its catch-up reads return. */
class CountedReads {
  events = 0;
  reads = 0;

  constructor(private readonly inner: EventStore) {}

  /** The adapter as the sealed store sees it, its readAll counted. */
  store(): EventStore {
    return new Proxy(this.inner, {
      get: (target, name, receiver) => {
        if (name !== 'readAll') return Reflect.get(target, name, receiver) as unknown;
        return async (checkpoint: string | null, limit: number, filter?: ReadFilter): Promise<ReadAllResult> => {
          const page = await target.readAll(checkpoint, limit, filter);
          this.reads += 1;
          this.events += page.events.length;
          return page;
        };
      },
    });
  }
}

const words = ['parcel', 'invoice', 'return', 'delivery', 'reminder', 'meeting', 'garden', 'street'];

/** An event of about 8 KB of personal fields (sealed, deflated: they open to about twice what they are stored in). */
function largeEvent(n: number): Record<string, unknown> {
  const notes = Array.from({ length: 600 }, (_, i) => `${words[(n + i) % words.length]}-${((n * 7_919 + i * 104_729) % 1_000_000).toString(16)}`);
  return { userId: `u-${n % 100}`, eventName: 'support_ticket', eventData: { email: `u-${n % 100}@example.com`, phone: `+49 30 ${n}`, notes: notes.join(' ') } };
}

describe('a backlog of large sealed events (int)', function () {
  this.timeout(120_000);
  const total = 1_500;
  let app: TestApp;
  let acme: Credentials;
  let pool: Pool;

  before(async () => {
    // The adapter under the count is PostgreSQL's: the events are kept there whatever TEST_EVENT_STORE says.
    app = await TestApp.start({ eventStoreUrl: undefined }, { erasureRunner: false });
    acme = await app.account('Acme');
    for (let from = 0; from < total; from += 50) {
      const results = bulkResults(await app.ingest(acme, 'events/bulk', Array.from({ length: 50 }, (_, i) => largeEvent(from + i))));
      expect(results.every((r) => r.status === 'queued')).to.equal(true);
    }
    pool = createPool(app.database.url, 8, 30_000);
  });

  after(async () => {
    await pool.end();
    await app.stop();
  });

  it('drains with each stored event read about once, whatever the pages open to', async () => {
    const { rows: stored } = await pool.query<{ bytes: string }>('SELECT sum(data_bytes)::text AS bytes FROM events');
    // More than a page's budget as stored: pages are bounded by bytes, not by events.
    expect(Number(stored[0]?.bytes)).to.be.above(defaultPageBytes);
    const counted = new CountedReads(new PostgresEventStore(pool));
    const store = new SealedEventStore(counted.store(), new PersonKeys(pool, { flushedWithTheEvents: true }), new Pseudonyms(pool));
    // The batch size of npm start's projection thread: 1,000 events a page at most.
    const worker = new ProjectionWorker({ pool, store, log: createLogger('silent'), projections, batchSize: 1_000, pollMs: 20 }).start();
    try {
      // Ends when caught up, or as soon as the reads have passed what a drain may cost.
      await eventually(
        async () => counted.events > 3 * total || (await eventsBehind(pool, store)) === 0,
        100_000,
        () => `not caught up: ${counted.events} events read in ${counted.reads} reads`,
      );
    } finally {
      await worker.stop();
    }
    // Each page is read once and kept whole, or ends where its opened bytes fill the budget: never
    // read again for a handful of its events.
    expect(counted.events, `events read from the store in ${counted.reads} reads to apply ${total}`).to.be.at.most(2 * total);
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM user_events');
    expect(rows[0]?.n).to.equal(total);
  });
});
