import { expect } from 'chai';
import { findAccount } from '../../src/accounts/accounts.js';
import { projections } from '../../projections/index.js';
import { partCount, partOf } from '../../projections/runner/parts.js';
import { projectionStatus, type ProjectionsStatus } from '../../projections/runner/status.js';
import type { Credentials, TestApp } from './app.js';
import { cursorMoves, movesOutsideTheirClaim, movesRepeated } from './cursor-moves.js';
import { appliedOf, eventCount, expectSameReadModels, independentReplay, inParallel, send, snapshot } from './projection-harness.js';
import type { WorkerProcess } from './worker-processes.js';

/**
 * What the specs of projection workers sharing the parts have in common: accounts spread over
 * every part, a backlog for each, who holds which part, and the end state every run must reach
 * (every event applied once, by the part's owner, row for row what an independent replay gives).
 */

export interface TestAccount extends Credentials {
  id: string;
  part: number;
}

/** One account in each part: accounts are made until every part has one, and the first of each is kept. */
export async function accountInEveryPart(app: TestApp): Promise<TestAccount[]> {
  const byPart = new Map<number, TestAccount>();
  for (let made = 0; byPart.size < partCount; made += 1) {
    if (made > 500) throw new Error(`500 accounts cover only ${byPart.size} parts`);
    const credentials = await app.account(`part-${made}`);
    const id = (await findAccount(app.pool, credentials.licenseCode))?.id as string;
    const part = partOf(id);
    if (!byPart.has(part)) byPart.set(part, { ...credentials, id, part });
  }
  return [...byPart.values()].sort((a, b) => a.part - b.part);
}

/**
 * A backlog of each account: `bulks` bulk requests of 100 upserts of 40 users (each user upserted
 * again and again, so that a lead's version counts its upserts), 20 events, 10 submissions of 5
 * products and 10 product events.
 */
export async function postBacklog(app: TestApp, accounts: readonly Credentials[], bulks: number): Promise<void> {
  const requests: [Credentials, string, unknown][] = [];
  for (const account of accounts) {
    for (let b = 0; b < bulks; b += 1) {
      requests.push([account, 'users/bulk', Array.from({ length: 100 }, (_, i) => ({ userId: `u-${(b * 13 + i) % 40}`, attributes: { round: b, score: b * 100 + i } }))]);
    }
    for (let i = 0; i < 20; i += 1) requests.push([account, 'events', { userId: `u-${i}`, eventName: 'Viewed', eventData: { i } }]);
    for (let i = 0; i < 10; i += 1) requests.push([account, 'products', { productId: `sku-${i % 5}`, properties: { round: i } }]);
    for (let i = 0; i < 10; i += 1) requests.push([account, 'productsevents', { productId: `sku-${i % 5}`, userId: `u-${i}`, eventName: 'Viewed' }]);
  }
  await inParallel(requests, 8, ([account, endpoint, body]) => send(app, account, endpoint, body));
}

export const status = (app: TestApp): Promise<ProjectionsStatus> => projectionStatus(app.pool, app.services.store);

/** The parts each worker process holds (by pid@host), as status shows them. */
export function partsOf(whole: ProjectionsStatus, worker: WorkerProcess): number[] {
  return whole.workers.find((w) => w.worker === worker.name)?.parts ?? [];
}

/** Every part held, each by exactly one live worker, and the workers' lists of parts agreeing with the parts'. */
export function everyPartHeldOnce(whole: ProjectionsStatus): boolean {
  const listed = whole.workers.flatMap((w) => w.parts).sort((a, b) => a - b);
  const expected = Array.from({ length: partCount }, (_, i) => i);
  return whole.parts.every((p) => p.owner !== null) && JSON.stringify(listed) === JSON.stringify(expected);
}

export const describeHoldings = (whole: ProjectionsStatus): string =>
  JSON.stringify({ workers: whole.workers.map((w) => [w.worker, w.parts]), parts: whole.parts.map((p) => [p.part, p.owner?.worker ?? null, p.epoch]) });

/**
 * The end every run reaches: each projection's cursors count every event of its types once, no
 * batch committed by a worker that did not hold its part at the commit or from a position already
 * moved from, each user's lead version is its number of upserts, and the read models are row for
 * row those of an independent replay.
 */
export async function expectAppliedOnceByOwners(app: TestApp, what: string): Promise<void> {
  for (const projection of projections) {
    expect(await appliedOf(app.pool, projection), `${what}: ${projection.name}: events applied`).to.equal(await eventCount(app.pool, projection.eventTypes));
  }
  const moves = await cursorMoves(app.pool);
  expect(moves.length, `${what}: cursor moves recorded`).to.be.above(0);
  expect(movesOutsideTheirClaim(moves), `${what}: batches committed by a worker not holding the part`).to.deep.equal([]);
  expect(movesRepeated(moves), `${what}: cursor positions moved from twice`).to.deep.equal([]);
  // The userId is sealed in the stored event: counted on the events opened, as the service reads them.
  const upserts: Record<string, number> = {};
  for (const event of await app.events()) {
    const userId = event.event_type === 'UserUpserted' ? event.data.userId : undefined;
    const id = `${String(event.metadata.accountId)}/${String(userId)}`;
    if (event.event_type === 'UserUpserted') upserts[id] = (upserts[id] ?? 0) + 1;
  }
  const { rows: versions } = await app.pool.query<{ id: string; n: number }>(
    "SELECT account_id::text || '/' || profile_id AS id, version AS n FROM leads WHERE profile_kind = 'user' ORDER BY 1",
  );
  expect(Object.fromEntries(versions.map((v) => [v.id, v.n])), `${what}: lead versions vs upserts per user`).to.deep.equal(upserts);
  expectSameReadModels(await snapshot(app.pool), await independentReplay(app.services.store, 77), `${what}: read models vs an independent replay`);
}
