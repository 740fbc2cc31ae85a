import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { createPool, type Pool } from '../src/db/pool.js';
import { schemaVersion, streams } from '../src/eventstore/events.js';
import type { NewEvent } from '../src/eventstore/port.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { appendEvents, neverAppends } from '../src/eventstore/postgres-sql.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { testRefs } from './support/ingest-doubles.js';

/** A tracked event of `accountId`, as ingest stores it. */
function tracked(accountId: string, userId = 'u1'): NewEvent {
  const id = randomUUID();
  return {
    type: 'EventTracked',
    data: { userId, eventName: 'Viewed', eventTime: null, eventTimeUtc: '2026-01-01T00:00:00.000Z', eventData: {} },
    id,
    stream: streams.user(accountId, testRefs(accountId).user(userId)),
    metadata: { trackId: id, accountId, receivedAt: '2026-01-01T00:00:00.000Z', schemaVersion },
  };
}

/**
 * The catch-up horizon of the PostgreSQL store: a read returns no event of a transaction that might
 * still be followed by an older one committing, and a transaction that declared it never appends (a
 * projection batch) does not hold the reads back however long it stays open; an append declared for
 * one account holds back the reads of that account only.
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

  it('an open writer in another database of the same server holds nothing back', async () => {
    // Transaction ids are the server's: a writer elsewhere (another service, another test) is in every snapshot.
    const elsewhere = await freshDatabase();
    const foreign = new pg.Client({ connectionString: elsewhere.url });
    await foreign.connect();
    try {
      await foreign.query('BEGIN');
      await foreign.query('CREATE TABLE busy (n int)');
      await foreign.query('INSERT INTO busy VALUES (1)');
      const accountId = randomUUID();
      await store.append([tracked(accountId)]);
      expect((await store.readAll(null, 100, { accountId })).events, "this account's read").to.have.length(1);
      expect((await store.readAll(null, 100)).events, 'a read of all accounts').to.have.length(1);
      expect((await store.scanAccounts(null, 100)).accounts.map((a) => a.accountId), 'discovery').to.deep.equal([accountId]);
    } finally {
      await foreign.end();
      await elsewhere.drop();
    }
  });

  /** Opens an append of `events` on `other`, as the store writes it, and leaves it uncommitted. */
  async function openAppend(events: NewEvent[]): Promise<void> {
    await other.query('BEGIN');
    const { text, values } = appendEvents(events, false);
    await other.query(text, values);
  }

  it("an open append of one account holds back that account's reads and the reads of all, not another account's", async () => {
    const [busy, quiet] = [randomUUID(), randomUUID()];
    await openAppend([tracked(busy), tracked(busy)]);
    await store.append([tracked(quiet)]);
    // Another stream: the open append holds its streams' locks.
    await store.append([tracked(busy, 'u2')]);
    expect((await store.readAll(null, 100, { accountId: quiet })).events, "the quiet account's read").to.have.length(1);
    expect((await store.readAll(null, 100, { accountId: busy })).events, "the busy account's read").to.have.length(0);
    expect((await store.readAll(null, 100)).events, 'a read of all accounts').to.have.length(0);
    await other.query('COMMIT');
    expect((await store.readAll(null, 100, { accountId: busy })).events, 'the busy account once the append ended').to.have.length(3);
    expect((await store.readAll(null, 100)).events, 'all once it ended').to.have.length(4);
  });

  it('an open append of two accounts holds back the reads of both, and of a third', async () => {
    const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
    await openAppend([tracked(first), tracked(second)]);
    await store.append([tracked(first, 'u2')]);
    await store.append([tracked(third)]);
    expect((await store.readAll(null, 100, { accountId: first })).events).to.have.length(0);
    expect((await store.readAll(null, 100, { accountId: third })).events).to.have.length(0);
    await other.query('COMMIT');
    expect((await store.readAll(null, 100, { accountId: first })).events).to.have.length(2);
    expect((await store.readAll(null, 100, { accountId: third })).events).to.have.length(1);
  });

  it("a cursor of the quiet account that passed an open append of another account misses none of the quiet account's events", async () => {
    const [busy, quiet] = [randomUUID(), randomUUID()];
    await openAppend([tracked(busy)]);
    await store.append([tracked(quiet)]);
    const first = await store.readAll(null, 100, { accountId: quiet });
    expect(first.events).to.have.length(1);
    await other.query('COMMIT');
    await store.append([tracked(quiet)]);
    const after = await store.readAll(first.checkpoint, 100, { accountId: quiet });
    expect(after.events.map((e) => e.metadata.accountId)).to.deep.equal([quiet]);
    expect((await store.readAll(null, 100, { accountId: busy })).events).to.have.length(1);
  });

  it('says when a page or a scan holds every event readable now (atEnd), and not when its limit, its bytes or the horizon cut it', async () => {
    const accountId = randomUUID();
    await store.append([tracked(accountId), tracked(accountId, 'u2'), tracked(accountId, 'u3')]);
    const whole = await store.readAll(null, 100, { accountId });
    expect(whole.events, 'the whole page').to.have.length(3);
    expect(whole.atEnd, 'the whole page').to.equal(true);
    const cut = await store.readAll(null, 2, { accountId });
    expect([cut.events.length, cut.atEnd], 'a page cut by its limit').to.deep.equal([2, false]);
    const exact = await store.readAll(null, 3, { accountId });
    expect([exact.events.length, exact.atEnd], 'a page as long as its limit: it cannot tell').to.deep.equal([3, false]);
    const light = await store.readAll(null, 100, { accountId, maxBytes: 1 });
    expect([light.events.length, light.atEnd], 'a page cut by its bytes').to.deep.equal([1, false]);
    expect((await store.readAll(whole.checkpoint, 100, { accountId })).atEnd, 'nothing new').to.equal(true);
    expect((await store.scanAccounts(null, 100)).atEnd, 'a scan of everything').to.equal(true);
    expect((await store.scanAccounts(null, 2)).atEnd, 'a scan cut by its limit').to.equal(false);

    // Readable now: events behind the horizon are not, so a page that stops at it is at the end.
    await openAppend([tracked(accountId, 'u4')]);
    await store.append([tracked(accountId, 'u5')]);
    const upToHorizon = await store.readAll(whole.checkpoint, 100, { accountId });
    expect([upToHorizon.events.length, upToHorizon.atEnd]).to.deep.equal([0, true]);
    await other.query('COMMIT');
    const after = await store.readAll(whole.checkpoint, 100, { accountId });
    expect([after.events.length, after.atEnd]).to.deep.equal([2, true]);
  });
});
