import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { productsProjection } from '../projections/products/projection.js';
import { applyPage, type BatchOutcome } from '../projections/runner/batch.js';
import { PartClaims, type Claim } from '../projections/runner/claims.js';
import { CursorCache } from '../projections/runner/cursors.js';
import { partOf } from '../projections/runner/parts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { schemaVersion, streams } from '../src/eventstore/events.js';
import type { NewEvent, ReadAllResult } from '../src/eventstore/port.js';
import { PostgresEventStore } from '../src/eventstore/postgres.js';
import { createLogger } from '../src/logger.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { eventually, sleep, within } from './support/eventually.js';

/**
 * A batch (one account's events for one projection) commits its rows and its cursor together, and
 * only while its worker still holds the account's part at the epoch it claimed: a worker that lost
 * its part (its lease expired, another claimed it) commits nothing, whatever it had applied. The
 * batches run on a real database, through the products projection, with events appended by the
 * Postgres event store.
 */

const silent = createLogger('silent');
const projection = productsProjection;

describe('batch fence (int)', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let pool: Pool;
  let store: PostgresEventStore;
  let client: pg.PoolClient;
  const account = randomUUID();
  const part = partOf(account);

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 10);
    store = new PostgresEventStore(pool);
    client = await pool.connect();
  });
  afterEach(async () => {
    client.release();
    await store.close();
    await pool.end();
    await database.drop();
  });

  /** Submits product `productId` `times` times, each its own append (its own transaction). */
  async function submit(productId: string, times: number): Promise<void> {
    for (let i = 1; i <= times; i += 1) {
      const id = randomUUID();
      const event: NewEvent = {
        type: 'ProductSubmitted',
        data: { productId, properties: { round: i } },
        id,
        stream: streams.product(account, productId),
        metadata: { trackId: id, accountId: account, receivedAt: new Date().toISOString(), schemaVersion },
      };
      await store.append([event]);
    }
  }

  function claimer(leaseMs: number): { id: string; claims: PartClaims } {
    const id = randomUUID();
    const claims = new PartClaims({ pool, workerId: id, name: 'test', leaseMs, log: silent, onGained: () => undefined, onLost: () => undefined, idle: () => true });
    return { id, claims };
  }

  /** The page of the account's events after its cursor, and the cursor it was read from. */
  async function readBatch(): Promise<{ checkpoint: string | null; page: ReadAllResult }> {
    const cursor = await new CursorCache(store).get(client, projection.name, account);
    const page = await store.readAll(cursor.checkpoint, 100, { types: projection.eventTypes, accountId: account });
    return { checkpoint: cursor.checkpoint, page };
  }

  function apply(on: pg.PoolClient, batch: { checkpoint: string | null; page: ReadAllResult }, claim: Claim & { workerId: string }): Promise<BatchOutcome> {
    return applyPage(on, projection, false, { accountId: account, checkpoint: batch.checkpoint, claim }, batch.page, silent);
  }

  async function versions(): Promise<Record<string, number>> {
    const { rows } = await pool.query<{ product_id: string; version: number }>('SELECT product_id, version FROM products WHERE account_id = $1', [account]);
    return Object.fromEntries(rows.map((row) => [row.product_id, row.version]));
  }

  async function cursorRow(): Promise<{ checkpoint: string | null; events_applied: number }> {
    const { rows } = await pool.query<{ checkpoint: string | null; events_applied: number }>(
      'SELECT checkpoint, events_applied FROM projection_account_checkpoints WHERE projection = $1 AND account_id = $2',
      [projection.name, account],
    );
    return rows[0] as { checkpoint: string | null; events_applied: number };
  }

  /** `worker`'s claim on the account's part. */
  function claimOf(worker: { id: string; claims: PartClaims }): Claim & { workerId: string } {
    const claim = worker.claims.claimOn(part);
    expect(claim, `claim of worker ${worker.id} on part ${part}`).to.not.equal(null);
    return { ...(claim as Claim), workerId: worker.id };
  }

  it('under a valid claim, a batch commits its rows and the cursor together', async () => {
    await submit('p1', 3);
    const worker = claimer(4_000);
    await worker.claims.tick();
    const batch = await readBatch();
    expect(batch.page.events).to.have.length(3);
    const outcome = await apply(client, batch, claimOf(worker));
    expect(outcome).to.deep.equal({ committed: true, checkpoint: batch.page.checkpoint, applied: 3, parked: 0 });
    expect(await versions()).to.deep.equal({ p1: 3 });
    expect(await cursorRow()).to.deep.equal({ checkpoint: batch.page.checkpoint, events_applied: 3 });
  });

  it("under a claim whose epoch another worker bumped, a batch is 'fenced': no row, the cursor unmoved", async () => {
    await submit('p1', 3);
    const old = claimer(300);
    await old.claims.tick();
    const claim = claimOf(old);
    const batch = await readBatch();
    await sleep(400); // the old owner is paused past its lease; another worker claims the part
    const other = claimer(4_000);
    await other.claims.tick();
    expect(BigInt(claimOf(other).epoch)).to.equal(BigInt(claim.epoch) + 1n);

    expect(await apply(client, batch, claim)).to.deep.equal({ committed: false, reason: 'fenced' });
    expect(await versions(), 'products after the fenced batch').to.deep.equal({});
    expect(await cursorRow()).to.deep.equal({ checkpoint: null, events_applied: 0 });

    // The new owner applies the same events, once.
    expect(await apply(client, await readBatch(), claimOf(other))).to.include({ committed: true, applied: 3 });
    expect(await versions()).to.deep.equal({ p1: 3 });
  });

  it("under a claim whose lease expired, even unclaimed since, a batch is 'fenced'", async () => {
    await submit('p1', 2);
    const worker = claimer(300);
    await worker.claims.tick();
    const claim = claimOf(worker);
    const batch = await readBatch();
    await sleep(400);
    expect(await apply(client, batch, claim)).to.deep.equal({ committed: false, reason: 'fenced' });
    expect(await versions()).to.deep.equal({});
    expect(await cursorRow()).to.deep.equal({ checkpoint: null, events_applied: 0 });
  });

  it("a batch read from a stale cursor is 'moved' and applies nothing twice", async () => {
    await submit('p1', 3);
    const worker = claimer(4_000);
    await worker.claims.tick();
    const batch = await readBatch();
    expect(await apply(client, batch, claimOf(worker))).to.include({ committed: true });
    // The same page again, as a worker whose copy of the cursor is behind (another applied it).
    expect(await apply(client, batch, claimOf(worker))).to.deep.equal({ committed: false, reason: 'moved' });
    expect(await versions(), 'each submission counted once').to.deep.equal({ p1: 3 });
    expect(await cursorRow()).to.deep.equal({ checkpoint: batch.page.checkpoint, events_applied: 3 });
  });

  it('a claimer finds the part locked while a batch is between its fence and its COMMIT: it skips it, the batch commits, and the next claim is at a new epoch', async () => {
    await submit('p1', 3);
    const leaseMs = 800;
    const old = claimer(leaseMs);
    await old.claims.tick();
    const claim = claimOf(old);
    const batch = await readBatch();

    // The batch's connection stops at its COMMIT (after the fence) until the gate opens.
    let atCommit: () => void = () => undefined;
    const reachedCommit = new Promise<void>((resolve) => (atCommit = resolve));
    let openGate: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const gated = new Proxy(client, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver) as unknown;
        return async (text: unknown, values?: unknown) => {
          if (text === 'COMMIT') {
            atCommit();
            await gate;
          }
          return target.query(text as string, values as unknown[]);
        };
      },
    });
    const applying = apply(gated, batch, claim);
    await within(reachedCommit, 5_000, 'the batch reaching its COMMIT');

    // Meanwhile the lease expires, and another worker claims every expired part.
    await eventually(
      async () => (await pool.query<{ expired: boolean }>('SELECT lease_expires_at < clock_timestamp() AS expired FROM projection_parts WHERE part = $1', [part])).rows[0]?.expired,
      5_000,
      () => 'the lease of the part expiring',
    );
    const other = claimer(4_000);
    await within(other.claims.tick(), 2_000, "the other worker's tick (not blocked by the batch)");
    expect(other.claims.parts, 'parts claimed while the batch holds the fence').to.not.include(part);
    expect(other.claims.parts).to.have.length(15);

    openGate();
    expect(await applying).to.deep.equal({ committed: true, checkpoint: batch.page.checkpoint, applied: 3, parked: 0 });
    expect(await versions()).to.deep.equal({ p1: 3 });

    await other.claims.tick();
    expect(BigInt(claimOf(other).epoch), 'epoch of the part claimed after the commit').to.equal(BigInt(claim.epoch) + 1n);
    // And a later batch of the old owner, at the old epoch, is fenced.
    await submit('p1', 1);
    expect(await apply(client, await readBatch(), claim)).to.deep.equal({ committed: false, reason: 'fenced' });
    expect(await versions()).to.deep.equal({ p1: 3 });
  });
});
