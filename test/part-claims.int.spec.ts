import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { PartClaims, type Claim } from '../projections/runner/claims.js';
import { partCount } from '../projections/runner/parts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { createLogger } from '../src/logger.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { sleep } from './support/eventually.js';

/**
 * Workers sharing the 16 parts of the accounts through their claims in PostgreSQL: each takes its
 * share, every part is held by exactly one, a worker that stops renewing loses its parts to the
 * others within a lease at a new epoch, and an expired lease is never renewed. A worker's death is
 * simulated by no longer calling tick(): exactly what a stopped or cut-off process does.
 */

const silent = createLogger('silent');
const allParts = Array.from({ length: partCount }, (_, i) => i);

interface PartRow {
  part: number;
  owner: string | null;
  epoch: string;
  lease_expires_at: Date | null;
}

/** A worker's claims, with what it was told it gained and lost. */
interface Claimer {
  id: string;
  claims: PartClaims;
  gained: Claim[][];
  lost: number[][];
}

describe('part claims (int)', function () {
  this.timeout(30_000);
  let database: TestDatabase;
  let pool: Pool;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 10);
  });
  afterEach(async () => {
    await pool.end();
    await database.drop();
  });

  function claimer(leaseMs = 4_000): Claimer {
    const id = randomUUID();
    const gained: Claim[][] = [];
    const lost: number[][] = [];
    const claims = new PartClaims({
      pool,
      workerId: id,
      name: `worker ${id.slice(0, 8)}`,
      leaseMs,
      log: silent,
      onGained: (c) => gained.push(c),
      onLost: (p) => lost.push(p),
      idle: () => true,
    });
    return { id, claims, gained, lost };
  }

  async function parts(): Promise<PartRow[]> {
    const { rows } = await pool.query<PartRow>('SELECT part, owner, epoch::text AS epoch, lease_expires_at FROM projection_parts ORDER BY part');
    return rows;
  }

  /** Every part held by exactly one of `claimers`, as each believes and as the database says. */
  async function expectEveryPartHeldOnce(claimers: Claimer[]): Promise<void> {
    const held = claimers.flatMap((c) => c.claims.parts);
    expect(held.toSorted((a, b) => a - b), 'parts held by the workers, each once').to.deep.equal(allParts);
    const rows = await parts();
    for (const c of claimers) {
      const owned = rows.filter((row) => row.owner === c.id).map((row) => row.part);
      expect(owned, `parts of worker ${c.id} in the database`).to.deep.equal(c.claims.parts);
      for (const part of c.claims.parts) expect(c.claims.claimOn(part)?.epoch, `epoch of part ${part}`).to.equal(rows[part]?.epoch);
    }
  }

  it('two workers: the first takes all 16 parts, then they hold 8 and 8, none twice', async () => {
    const [a, b] = [claimer(), claimer()];
    await a.claims.tick();
    expect(a.claims.parts).to.deep.equal(allParts);
    await expectEveryPartHeldOnce([a]);

    await b.claims.tick(); // joins: its share is 8, but nothing is free yet
    expect(b.claims.parts).to.deep.equal([]);
    await a.claims.tick(); // gives up the parts above its share
    expect(a.claims.parts).to.have.length(8);
    expect(a.lost.flat().toSorted((x, y) => x - y), 'parts given up by the first').to.deep.equal(allParts.slice(8));
    await b.claims.tick(); // takes them
    expect(b.claims.parts).to.have.length(8);
    await expectEveryPartHeldOnce([a, b]);

    // Further ticks change nothing: the shares are stable.
    const before = await parts();
    for (let i = 0; i < 3; i += 1) for (const c of [a, b]) await c.claims.tick();
    await expectEveryPartHeldOnce([a, b]);
    expect((await parts()).map((row) => [row.owner, row.epoch])).to.deep.equal(before.map((row) => [row.owner, row.epoch]));
  });

  it('three workers: shares of at most 6, every part held once', async () => {
    const workers = [claimer(), claimer(), claimer()];
    for (let round = 0; round < 3; round += 1) for (const c of workers) await c.claims.tick();
    await expectEveryPartHeldOnce(workers);
    for (const c of workers) expect(c.claims.parts.length, `share of worker ${c.id}`).to.be.within(4, 6);
  });

  it('a worker that stops ticking loses its parts to the others within one lease, at a higher epoch', async () => {
    const leaseMs = 600;
    const [a, b] = [claimer(leaseMs), claimer(leaseMs)];
    for (let round = 0; round < 2; round += 1) for (const c of [a, b]) await c.claims.tick();
    await expectEveryPartHeldOnce([a, b]);
    const epochs = new Map((await parts()).map((row) => [row.part, BigInt(row.epoch)]));
    const ofDead = a.claims.parts;
    const ofLive = b.claims.parts;

    // `a` renews a last time and dies: it renews nothing from then on. `b` ticks every quarter
    // lease, as a worker does.
    await b.claims.tick();
    const died = performance.now();
    await a.claims.tick();
    while (b.claims.parts.length < partCount) {
      expect(performance.now() - died, 'time for the survivor to hold every part').to.be.below(leaseMs + 400);
      await sleep(leaseMs / 4);
      await b.claims.tick();
    }
    const taken = performance.now() - died;
    expect(taken, 'not before the dead worker\'s leases expired').to.be.at.least(leaseMs - 20);
    await expectEveryPartHeldOnce([b]);
    const rows = await parts();
    for (const part of ofDead) expect(BigInt(rows[part]?.epoch ?? '0'), `epoch of part ${part}, taken over`).to.equal((epochs.get(part) ?? 0n) + 1n);
    for (const part of ofLive) expect(BigInt(rows[part]?.epoch ?? '0'), `epoch of part ${part}, renewed`).to.equal(epochs.get(part));
  });

  it('a worker that has not renewed in time stops using its claims before its leases expire', async () => {
    const leaseMs = 600;
    const a = claimer(leaseMs);
    await a.claims.tick();
    expect(a.claims.claimOn(3)).to.not.equal(null);
    await sleep(leaseMs * 0.9 + 20);
    expect(a.claims.claimOn(3), 'a claim past 90% of its lease without a renewal').to.equal(null);
    const row = (await parts())[3];
    expect(row?.owner, 'the lease itself may still run: owned in the database').to.equal(a.id);
  });

  it('an expired lease is not renewed by its old owner: it loses the part and claims it again at a new epoch', async () => {
    const leaseMs = 300;
    const a = claimer(leaseMs);
    await a.claims.tick();
    const first = new Map((await parts()).map((row) => [row.part, row.epoch]));
    expect(a.gained.flat().map((c) => c.part)).to.deep.equal(allParts);

    await sleep(leaseMs + 100); // expired, and nobody claimed them meanwhile
    await a.claims.tick();
    expect(a.lost, 'parts reported lost at the tick after expiry').to.deep.equal([allParts]);
    expect(a.gained).to.have.length(2);
    for (const claim of a.gained[1] ?? []) expect(BigInt(claim.epoch), `new epoch of part ${claim.part}`).to.equal(BigInt(first.get(claim.part) ?? '0') + 1n);
    await expectEveryPartHeldOnce([a]);
  });

  it('an expired lease taken by another worker: the old owner loses it and takes nothing back', async () => {
    const leaseMs = 300;
    const [a, b] = [claimer(leaseMs), claimer(leaseMs)];
    await a.claims.tick();
    await sleep(leaseMs + 100);
    await b.claims.tick(); // `a` is no longer live: `b` takes every part
    expect(b.claims.parts).to.deep.equal(allParts);
    await a.claims.tick();
    expect(a.lost.flat().toSorted((x, y) => x - y)).to.deep.equal(allParts);
    expect(a.claims.parts, 'parts of the old owner after its tick').to.deep.equal([]);
    for (const part of allParts) expect(a.claims.claimOn(part), `claim of the old owner on part ${part}`).to.equal(null);
    await expectEveryPartHeldOnce([b]);
  });

  it('releaseAll frees the parts at once: another worker takes them at its next tick, without waiting for a lease', async () => {
    const leaseMs = 60_000;
    const [a, b] = [claimer(leaseMs), claimer(leaseMs)];
    for (let round = 0; round < 2; round += 1) for (const c of [a, b]) await c.claims.tick();
    await expectEveryPartHeldOnce([a, b]);
    const ofA = a.claims.parts;
    await a.claims.releaseAll();
    const rows = await parts();
    for (const part of ofA) expect(rows[part]?.owner, `owner of part ${part} after releaseAll`).to.equal(null);
    const { rows: workers } = await pool.query<{ worker_id: string }>('SELECT worker_id FROM projection_workers');
    expect(workers.map((w) => w.worker_id), 'live workers after releaseAll').to.deep.equal([b.id]);
    await b.claims.tick();
    await expectEveryPartHeldOnce([b]);
  });

  it('a batch fenced under an old epoch does not drop the claim taken again since; a part its worker lost is not renewed, and another worker takes it', async () => {
    const leaseMs = 400;
    const [a, b] = [claimer(leaseMs), claimer(leaseMs)];
    await a.claims.tick();
    const old = a.claims.claimOn(0) as Claim;
    await sleep(leaseMs + 100);
    await a.claims.tick(); // expired: claimed again, at a new epoch
    const now = a.claims.claimOn(0) as Claim;
    expect(Number(now.epoch)).to.equal(Number(old.epoch) + 1);
    // A batch begun under the old epoch is fenced and says so: the claim held now stays.
    a.claims.lost(old);
    expect(a.claims.claimOn(0), 'claim after a stale loss').to.deep.equal(now);
    // A batch fenced under the current epoch: the part is no longer counted, nor renewed.
    a.claims.lost(now);
    expect(a.claims.parts).to.not.include(0);
    const leaseBefore = (await parts())[0]?.lease_expires_at?.getTime();
    await a.claims.tick();
    const row = (await parts())[0] as PartRow;
    expect(row.lease_expires_at?.getTime(), 'lease of the lost part, not renewed').to.equal(leaseBefore);
    await sleep(leaseMs + 100);
    await b.claims.tick();
    expect(b.claims.parts, 'the other worker takes the part its owner lost').to.include(0);
  });
});
