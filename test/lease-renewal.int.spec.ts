import { expect } from 'chai';
import pg from 'pg';
import { projections } from '../projections/index.js';
import { partCount } from '../projections/runner/parts.js';
import { ProjectionWorker } from '../projections/runner/worker.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { createLogger } from '../src/logger.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { eventually, sleep } from './support/eventually.js';

/**
 * The heartbeat renews the worker's leases on a connection of its own: lanes, discovery, a lag
 * report or a rebuild's index builds holding every other connection of the pool must not let the
 * leases expire (the parts would go to another worker, and this one's batches would be fenced).
 */
describe('lease renewal with the pool exhausted (int)', function () {
  this.timeout(30_000);
  // Two seconds: renewals every half second leave room for a loaded machine.
  const leaseMs = 2_000;
  let database: TestDatabase;
  let pool: Pool;
  let observer: pg.Client;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 6);
    observer = new pg.Client({ connectionString: database.url });
    await observer.connect();
  });
  afterEach(async () => {
    await observer.end();
    await pool.end();
    await database.drop();
  });

  interface PartRow {
    owner: string | null;
    epoch: string;
    live: boolean;
  }

  async function parts(): Promise<PartRow[]> {
    const { rows } = await observer.query<PartRow>('SELECT owner, epoch::text AS epoch, lease_expires_at > now() AS live FROM projection_parts ORDER BY part');
    return rows;
  }

  it('keeps every part at the same epoch, its leases live, while nothing else can get a connection for three leases', async () => {
    const worker = new ProjectionWorker({ pool, store: new PostgresEventStore(pool), log: createLogger('silent'), projections, lanes: 2, leaseMs }).start();
    try {
      const before = await eventually(async () => {
        const rows = await parts();
        return rows.length === partCount && rows.every((row) => row.owner === worker.id && row.live) && worker.state === 'active' && rows;
      }, 10_000, () => 'the worker holding all the parts');

      // Every connection the pool can give, taken and held: only the heartbeat's own is left to the worker.
      const held: pg.PoolClient[] = [];
      while (pool.totalCount < pool.options.max || pool.idleCount > 0) held.push(await pool.connect());
      try {
        for (let waited = 0; waited < 3 * leaseMs; waited += leaseMs / 2) {
          await sleep(leaseMs / 2);
          const rows = await parts();
          expect(rows.map((row) => row.owner), 'owners').to.deep.equal(before.map(() => worker.id));
          expect(rows.map((row) => row.epoch), 'epochs').to.deep.equal(before.map((row) => row.epoch));
          expect(rows.every((row) => row.live), 'every lease live').to.equal(true);
        }
        expect(worker.state).to.equal('active');
      } finally {
        for (const client of held) client.release();
      }
    } finally {
      await worker.stop();
    }
  });
});
