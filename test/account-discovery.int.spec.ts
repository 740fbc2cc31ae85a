import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { AccountDiscovery, type DiscoverySource } from '../projections/runner/discovery.js';
import { partOf } from '../projections/runner/parts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { schemaVersion, streams } from '../src/eventstore/events.js';
import type { AccountsScan, NewEvent } from '../src/eventstore/port.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

/**
 * Discovery of the accounts with events, on PostgreSQL, in a store written across a power of ten
 * of transaction ids (as every long-lived database is at 10^6, 10^7, ...): the accounts come in
 * catch-up order, each with a position from which a reader of that account misses none of its
 * events; discovery registers each with its part and that position; the shared record of how far
 * the store was read for accounts never moves back.
 */

const accountCount = 20;

describe('account discovery (int)', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  /** Accounts in the order of their first event. */
  let accounts: string[];
  /** Events appended per account. */
  let appended: Map<string, number>;

  function submitted(accountId: string): NewEvent {
    const id = randomUUID();
    return {
      type: 'ProductSubmitted',
      data: { productId: 'p', properties: {} },
      id,
      stream: streams.product(accountId, 'p'),
      metadata: { trackId: id, accountId, receivedAt: new Date().toISOString(), schemaVersion },
    };
  }

  before(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 10);
    store = new PostgresEventStore(pool);
    accounts = Array.from({ length: accountCount }, () => randomUUID());
    appended = new Map(accounts.map((a) => [a, 0]));
    // Append k (its own transaction): an event of the account before, then the first of account k.
    for (let k = 0; k < accountCount; k += 1) {
      const events = [...(k > 0 ? [submitted(accounts[k - 1] as string)] : []), submitted(accounts[k] as string)];
      await store.append(events);
      for (const e of events) appended.set(e.metadata.accountId, (appended.get(e.metadata.accountId) ?? 0) + 1);
    }
    for (const k of [3, 12, 0]) {
      await store.append([submitted(accounts[k] as string)]);
      appended.set(accounts[k] as string, (appended.get(accounts[k] as string) ?? 0) + 1);
    }
    // Transaction ids renumbered 90, 91, ... in their order: they straddle 100.
    await pool.query(`UPDATE events e SET transaction_id = (89 + r.rank)::text::xid8
      FROM (SELECT transaction_id, rank() OVER (ORDER BY transaction_id) AS rank FROM (SELECT DISTINCT transaction_id FROM events) t) r
      WHERE e.transaction_id = r.transaction_id`);
    const { rows } = await pool.query<{ below: number; above: number }>(
      "SELECT count(*) FILTER (WHERE transaction_id < '100'::xid8)::int AS below, count(*) FILTER (WHERE transaction_id >= '100'::xid8)::int AS above FROM events",
    );
    expect(rows[0]?.below, 'events below transaction 100').to.be.at.least(10);
    expect(rows[0]?.above, 'events from transaction 100').to.be.at.least(10);
  });
  after(async () => {
    await store.close();
    await pool.end();
    await database.drop();
  });

  beforeEach(async () => {
    await pool.query('TRUNCATE projection_accounts');
    await pool.query('UPDATE projection_discovery SET checkpoint = NULL');
  });

  /** The checkpoint at each of the account's events. */
  async function positionsOf(accountId: string): Promise<string[]> {
    const { rows } = await pool.query<{ at: string }>(
      "SELECT transaction_id::text || ':' || global_position AS at FROM events WHERE account_id = $1 ORDER BY transaction_id, global_position",
      [accountId],
    );
    return rows.map((row) => row.at);
  }

  /** A reader of the account from `before` gets every one of its events, and its first is the very next event of the store. */
  async function expectBeforeFirstEvent(accountId: string, before: string | null): Promise<void> {
    for (const at of await positionsOf(accountId)) expect(store.comparePositions(before, at), `${before} before event at ${at}`).to.be.below(0);
    const ofAccount = await store.readAll(before, 1_000, { accountId });
    expect(ofAccount.events, `events of ${accountId} read from ${before}`).to.have.length(appended.get(accountId) as number);
    const next = await store.readAll(before, 1);
    expect(next.events[0]?.metadata.accountId, `the event after ${before}`).to.equal(accountId);
  }

  async function head(): Promise<string | null> {
    const { rows } = await pool.query<{ at: string }>(
      "SELECT transaction_id::text || ':' || global_position AS at FROM events ORDER BY transaction_id DESC, global_position DESC LIMIT 1",
    );
    return rows[0]?.at ?? null;
  }

  it('scanAccounts: the accounts in catch-up order across transaction 99 -> 100, each with a position before all of its events', async () => {
    const scan = await store.scanAccounts(null, 1_000);
    expect(scan.accounts.map((a) => a.accountId), 'accounts in the order of their first events').to.deep.equal(accounts);
    expect(scan.checkpoint).to.equal(await head());
    for (const { accountId, before } of scan.accounts) await expectBeforeFirstEvent(accountId, before);
  });

  it('scanAccounts in pages of 3: the same accounts and positions, each page after the last, up to the head', async () => {
    const whole = await store.scanAccounts(null, 1_000);
    const firstMet = new Map<string, string | null>();
    let checkpoint: string | null = null;
    for (let pages = 0; ; pages += 1) {
      expect(pages, 'pages read').to.be.below(100);
      const page: AccountsScan = await store.scanAccounts(checkpoint, 3);
      if (page.checkpoint === checkpoint) break;
      expect(store.comparePositions(page.checkpoint, checkpoint), `page after ${checkpoint}`).to.be.above(0);
      for (const a of page.accounts) if (!firstMet.has(a.accountId)) firstMet.set(a.accountId, a.before);
      checkpoint = page.checkpoint;
    }
    expect(checkpoint).to.equal(whole.checkpoint);
    expect([...firstMet].map(([accountId, before]) => ({ accountId, before }))).to.deep.equal(whole.accounts.map(({ accountId, before }) => ({ accountId, before })));
  });

  it('registers every account with its part and a first checkpoint before its first event', async () => {
    const met: string[] = [];
    const discovery = new AccountDiscovery(pool, store, (found) => met.push(...found.map((a) => a.accountId)));
    await discovery.load();
    while (await discovery.poll()) {
      /* reads on */
    }
    expect(met).to.deep.equal(accounts);
    const { rows } = await pool.query<{ account_id: string; part: number; first_checkpoint: string | null }>('SELECT account_id, part, first_checkpoint FROM projection_accounts');
    expect(rows.map((row) => row.account_id).toSorted()).to.deep.equal(accounts.toSorted());
    for (const row of rows) {
      expect(row.part, `part of ${row.account_id}`).to.equal(partOf(row.account_id));
      await expectBeforeFirstEvent(row.account_id, row.first_checkpoint);
    }
    const { rows: discovered } = await pool.query<{ checkpoint: string | null }>('SELECT checkpoint FROM projection_discovery');
    expect(discovered[0]?.checkpoint, 'the shared record: the whole store read').to.equal(await head());
    expect(discovery.accountsIn(new Set([partOf(accounts[5] as string)]))).to.include(accounts[5]);
  });

  it('is caught up after a poll that read every event stored, even one that found new events (steady traffic)', async () => {
    const discovery = new AccountDiscovery(pool, store, () => undefined);
    await discovery.load();
    expect(await discovery.poll(), 'the first poll finds events').to.equal(true);
    expect(discovery.caughtUp, 'and read them all').to.equal(true);
    expect(await discovery.poll(), 'nothing new').to.equal(false);
    expect(discovery.caughtUp).to.equal(true);
  });

  it('the shared record only moves forward: a discovery behind another does not move it back', async () => {
    // A process that reads the store 3 events at a time, and loaded the record before the other moved it.
    const slowSource: DiscoverySource = {
      scanAccounts: (checkpoint, limit) => store.scanAccounts(checkpoint, Math.min(limit, 3)),
      comparePositions: (a, b) => store.comparePositions(a, b),
    };
    const slow = new AccountDiscovery(pool, slowSource, () => undefined);
    await slow.load();
    const fast = new AccountDiscovery(pool, store, () => undefined);
    await fast.load();
    while (await fast.poll()) {
      /* reads on */
    }
    const record = async (): Promise<string | null> => (await pool.query<{ checkpoint: string | null }>('SELECT checkpoint FROM projection_discovery')).rows[0]?.checkpoint ?? null;
    const end = await head();
    expect(await record()).to.equal(end);

    // The slow one reads 3 events (in transaction 91 or so, the record is past 100) and stores its cursor: the record stays.
    expect(await slow.poll()).to.equal(true);
    expect(slow.caughtUp, 'a poll cut by its limit: not caught up').to.equal(false);
    expect(await record(), 'the shared record after a discovery behind it stored its cursor').to.equal(end);
    // What the slow one registered does not replace the first checkpoints registered before.
    const { rows } = await pool.query<{ account_id: string; first_checkpoint: string | null }>('SELECT account_id, first_checkpoint FROM projection_accounts');
    for (const row of rows) await expectBeforeFirstEvent(row.account_id, row.first_checkpoint);
  });
});
