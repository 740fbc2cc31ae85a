import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { createPool, type Pool } from '../src/db/pool.js';
import { schemaVersion, streams } from '../src/eventstore/events.js';
import type { NewEvent } from '../src/eventstore/port.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { neverAppends } from '../src/eventstore/postgres-sql.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

/** A tracked event of `accountId`, as ingest stores it. */
function tracked(accountId: string): NewEvent {
  const id = randomUUID();
  return {
    type: 'EventTracked',
    data: { userId: 'u1', eventName: 'Viewed', eventTime: null, eventTimeUtc: '2026-01-01T00:00:00.000Z', eventData: {} },
    id,
    stream: streams.user(accountId, 'u1'),
    metadata: { trackId: id, accountId, receivedAt: '2026-01-01T00:00:00.000Z', schemaVersion },
  };
}

/**
 * The catch-up horizon of the PostgreSQL store: a read returns no event of a transaction that might
 * still be followed by an older one committing, and a transaction that declared it never appends (a
 * projection batch) does not hold the reads back however long it stays open.
 */
describe('catch-up horizon (int)', () => {
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  let other: pg.PoolClient;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 6);
    store = new PostgresEventStore(pool);
    other = await pool.connect();
  });
  afterEach(async () => {
    await other.query('ROLLBACK').catch(() => undefined);
    other.release();
    await store.close();
    await pool.end();
    await database.drop();
  });

  /** Opens a transaction on `other` that has a transaction id (it has written), older than what follows. */
  async function openWriter(declareNeverAppends: boolean): Promise<void> {
    await other.query('BEGIN');
    if (declareNeverAppends) await other.query(neverAppends);
    await other.query("INSERT INTO projection_discovery (singleton) VALUES (true) ON CONFLICT (singleton) DO UPDATE SET checkpoint = projection_discovery.checkpoint");
  }

  it('an open transaction that may append holds back the events committed after it began', async () => {
    const accountId = randomUUID();
    await openWriter(false);
    await store.append([tracked(accountId)]);
    expect((await store.readAll(null, 100, { accountId })).events, 'read while the older writer is open').to.have.length(0);
    expect((await store.scanAccounts(null, 100)).accounts, 'discovery meanwhile').to.deep.equal([]);
    await other.query('COMMIT');
    expect((await store.readAll(null, 100, { accountId })).events, 'read once it ended').to.have.length(1);
  });

  it('an open transaction that declared it never appends holds nothing back', async () => {
    const accountId = randomUUID();
    await openWriter(true);
    await store.append([tracked(accountId)]);
    expect((await store.readAll(null, 100, { accountId })).events, 'read while the projection batch is open').to.have.length(1);
    expect((await store.scanAccounts(null, 100)).accounts.map((a) => a.accountId)).to.deep.equal([accountId]);
    await other.query('COMMIT');
  });
});
