import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { createPool, type Pool } from '../src/db/pool.js';
import { PersonKeys } from '../src/eventstore/person-keys.js';
import { defaultPageBytes, type EventStore, type ReadAllResult, type ReadFilter } from '../src/eventstore/port.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { Pseudonyms } from '../src/eventstore/pseudonyms.js';
import { SealedEventStore } from '../src/eventstore/sealed-store.js';
import { createLogger } from '../src/logger.js';
import { projections, ProjectionWorker } from '../projections/index.js';
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
    // One reader, so that what is counted is its own pages (several projections share theirs for a
    // while, shared-catch-up.ts); the batch size of npm start's projection thread: 1,000 a page at most.
    const userEvents = projections.filter((p) => p.name === 'user-events');
    const worker = new ProjectionWorker({ pool, store, log: createLogger('silent'), projections: userEvents, batchSize: 1_000, pollMs: 20 }).start();
    const applied = async (): Promise<number> => (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM user_events')).rows[0]?.n ?? 0;
    try {
      // Ends when caught up, or as soon as the reads have passed what a drain may cost.
      await eventually(
        async () => counted.events > 3 * total || (await applied()) === total,
        100_000,
        () => `not caught up: ${counted.events} events read in ${counted.reads} reads`,
      );
    } finally {
      await worker.stop();
    }
    // Each page is read once and kept whole, or ends where its opened bytes fill the budget: never
    // read again for a handful of its events. The first page, read before what pages open to is
    // known, is cut about halfway: at most one page (1,000 events) is read beyond the backlog.
    expect(counted.events, `events read from the store in ${counted.reads} reads to apply ${total}`).to.be.at.most(total + 1_000);
    expect(await applied()).to.equal(total);
  });

  it('reads events that do not grow opened in whole pages, though the store passes its byte bound by the last event of a page', async () => {
    const other = await app.account('Plain');
    const { rows: ids } = await pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [other.licenseCode]);
    const accountId = ids[0]?.id ?? '';
    const count = 400;
    // Random base64 does not deflate: sealed and in base64 again, each event is stored in about the bytes it opens to.
    for (let from = 0; from < count; from += 50) {
      const items = Array.from({ length: 50 }, (_, i) => ({ userId: `p-${from + i}`, eventName: 'upload', eventData: { blob: randomBytes(1_500).toString('base64') } }));
      expect(bulkResults(await app.ingest(other, 'events/bulk', items)).every((r) => r.status === 'queued')).to.equal(true);
    }
    const counted = new CountedReads(new PostgresEventStore(pool));
    const store = new SealedEventStore(counted.store(), new PersonKeys(pool, { flushedWithTheEvents: true }), new Pseudonyms(pool));
    let checkpoint: string | null = null;
    let read = 0;
    // Pages of 64 KiB: about 30 of these events each, every page bounded by bytes.
    for (let page = 0; page < 10 * count; page += 1) {
      const result: ReadAllResult = await store.readAll(checkpoint, 10_000, { accountId, maxBytes: 65_536 });
      read += result.events.length;
      checkpoint = result.checkpoint;
      if (result.atEnd === true || result.events.length === 0) break;
    }
    expect(read, 'events opened').to.equal(count);
    expect(counted.events, `events read from the store in ${counted.reads} reads`).to.be.at.most(1.2 * count);
  });
});
