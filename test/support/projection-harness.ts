import { expect } from 'chai';
import { createPool, type Pool } from '../../src/db/pool.js';
import type { EventStore, EventType } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/logger.js';
import { appliedByProjection, selectCheckpoint, type CheckpointRow } from '../../projections/runner/checkpoints-sql.js';
import { projections, type Projection } from '../../projections/index.js';
import { eventsBehind } from '../../projections/runner/status.js';
import { ProjectionWorker } from '../../projections/runner/worker.js';
import { adminToken, type Credentials, type Reply, type TestApp } from './app.js';
import { freshDatabase } from './database.js';
import { eventually } from './eventually.js';
import { bulkResults, queued } from './replies.js';

/**
 * What the projection worker specs share: snapshots of every read-model table compared row for
 * row, an independent replay to compare with, and workloads that touch every read model.
 */

const silent = createLogger('silent');

// ---------------------------------------------------------------------------------------------
// Read-model snapshots
// ---------------------------------------------------------------------------------------------

/**
 * Every read-model table with its primary key, and the columns that record when a row was written
 * rather than what the events say (left out of the comparison).
 */
export const readModels: readonly (readonly [table: string, key: string, writeOrder?: string])[] = [
  ['leads', 'account_id, profile_kind, profile_id'],
  ['lead_merges', 'account_id, anonymous_id'],
  ['user_events', 'event_id'],
  ['products', 'account_id, product_id'],
  ['product_events', 'event_id'],
  ['track_index', 'event_id', 'indexed_order'],
  ['track_index_repeats', 'event_id, stream_name, stream_position'],
];

/** Rows of every read-model table, each row as JSON text, in primary-key order. */
export type Snapshot = Record<string, string[]>;

export async function snapshot(pool: Pool): Promise<Snapshot> {
  const result: Snapshot = {};
  for (const [table, key, writeOrder] of readModels) {
    const row = writeOrder ? `to_jsonb(t) - '${writeOrder}'` : 'to_jsonb(t)';
    const { rows } = await pool.query<{ row: string }>(`SELECT (${row})::text AS row FROM ${table} t ORDER BY ${key}`);
    result[table] = rows.map((r) => r.row);
  }
  return result;
}

/** Fails on the first row that differs, showing both versions of it. */
export function expectSameReadModels(actual: Snapshot, expected: Snapshot, what: string): void {
  for (const [table] of readModels) {
    const got = actual[table] ?? [];
    const want = expected[table] ?? [];
    let at = got.findIndex((row, i) => row !== want[i]);
    if (at < 0 && got.length !== want.length) at = Math.min(got.length, want.length);
    if (at >= 0) {
      expect.fail(
        `${what}: table ${table} differs (${got.length} rows, expected ${want.length}); first difference at row ${at}:\n` +
          `     got ${got[at] ?? '(no row)'}\nexpected ${want[at] ?? '(no row)'}`,
      );
    }
  }
}

export const trackIndexTypes = projections.find((p) => p.name === 'track-index')?.eventTypes ?? [];

export const rowCounts = (s: Snapshot): Record<string, number> => Object.fromEntries(readModels.map(([t]) => [t, s[t]?.length ?? 0]));

/**
 * Replays the events of `store` into the read models of a new, empty database, with batches of
 * `batchSize` events: an independent replay to compare against.
 */
export async function independentReplay(store: EventStore, batchSize: number): Promise<Snapshot> {
  const database = await freshDatabase();
  const pool = createPool(database.url, 8, 60_000);
  const worker = new ProjectionWorker({ pool, store, log: silent, batchSize, projections, pollMs: 20 }).start();
  try {
    await eventually(async () => (await eventsBehind(pool, store)) === 0, 20_000, () => 'the independent replay did not catch up');
    // Caught up means every event of the store applied once: said, should it ever not be so, with
    // what the replay's registry and cursors held.
    for (const projection of projections) {
      const { rows } = await pool.query<{ applied: string }>(
        'SELECT coalesce(sum(events_applied), 0)::text AS applied FROM projection_account_checkpoints WHERE projection = $1',
        [projection.name],
      );
      const stored = await store.backlog(null, { types: projection.eventTypes });
      if (Number(rows[0]?.applied ?? 0) !== stored.events) {
        const registry = (await pool.query('SELECT * FROM projection_accounts')).rows;
        const cursors = (await pool.query('SELECT * FROM projection_account_checkpoints')).rows;
        const discovered = (await pool.query('SELECT * FROM projection_discovery')).rows;
        throw new Error(`the independent replay applied ${rows[0]?.applied} events of ${projection.name}, of ${stored.events} stored: ${JSON.stringify({ registry, cursors, discovered })}`);
      }
    }
    return await snapshot(pool);
  } finally {
    await worker.stop();
    await pool.end();
    await database.drop();
  }
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/** Runs `work` on every item with at most `limit` at a time. */
export async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** Posts an item (or a bulk array) and asserts that every item in it was queued. */
export async function send(app: TestApp, account: Credentials, endpoint: string, body: unknown): Promise<void> {
  const reply = await app.ingest(account, endpoint, body);
  if (!Array.isArray(body)) {
    queued(reply);
    return;
  }
  const results = bulkResults(reply);
  expect(results, `${endpoint} ${JSON.stringify(body).slice(0, 200)}`).to.have.length(body.length);
  results.forEach((r, i) => expect(r.status, `${endpoint} item ${i}: ${JSON.stringify(r)}`).to.equal('queued'));
}

export async function eventCount(pool: Pool, types: readonly EventType[]): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE event_type = ANY($1)', [types]);
  return rows[0]?.n ?? 0;
}

export async function checkpointOf(pool: Pool, projection: Projection): Promise<CheckpointRow> {
  const { rows } = await pool.query<CheckpointRow>(selectCheckpoint, [projection.name]);
  expect(rows[0], `checkpoint row of ${projection.name}`).to.not.equal(undefined);
  return rows[0] as CheckpointRow;
}

/** GET on the read API as the administrator. */
export function readApi<T>(app: TestApp, account: Credentials, path: string): Promise<Reply<T>> {
  return app.get<T>(`/admin/v1/accounts/${account.licenseCode}${path}`, `Bearer ${adminToken}`);
}

export interface LeadBody {
  userId: string | null;
  anonymousId: string | null;
  anonymousIds: string[];
  attributes: Record<string, unknown>;
  version: number;
}

// ---------------------------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------------------------

export const ids = (tag: string) => ({
  user: (i: number) => `user-${tag}-${i}`,
  anon: (i: number) => `anon-${tag}-${i}`,
  sku: (i: number) => `sku-${tag}-${i}`,
});

/**
 * Users single and bulk with custom attributes of every type, merges in both orders and repeated,
 * events of known and anonymous profiles, products submitted repeatedly and product events.
 * Attribute types per account: plan string, visits and seats number, newsletter boolean,
 * last_login datetime.
 */
export async function variedWorkload(app: TestApp, account: Credentials, tag: string, bulkRequests: number): Promise<void> {
  const { user, anon, sku } = ids(tag);
  const post = (endpoint: string, body: unknown) => send(app, account, endpoint, body);
  // Anonymous profiles first.
  for (let i = 1; i <= 4; i += 1) {
    await post('users', { anonymousId: anon(i), city: `City ${i}`, attributes: { plan: 'free', visits: i, newsletter: i % 2 === 0 } });
  }
  // A merge after the anonymous profile exists: the known profile takes what it was not sent itself.
  await post('users', { userId: user(1), anonymousId: anon(1), firstName: 'Ann', attributes: { plan: 'pro' } });
  // A merge before the anonymous profile exists; the anonymous profile is sent afterwards.
  await post('users', { userId: user(2), anonymousId: anon(9), email: 'bo@example.com', attributes: { plan: 'gold' } });
  await post('users', {
    anonymousId: anon(9),
    email: 'anon9@example.com',
    city: 'Nine',
    attributes: { plan: 'trial', visits: 9, last_login: '2024-03-01T08:00:00+0100' },
  });
  // Repeated merges: the same pair again alone, and twice in one bulk request.
  await post('users', { userId: user(1), anonymousId: anon(1), attributes: { seats: 3 } });
  await post('users/bulk', [
    { userId: user(3), anonymousId: anon(2), attributes: { plan: 'team' } },
    { userId: user(3), anonymousId: anon(2), lastName: 'Ng', attributes: {} },
    { anonymousId: anon(2), country: 'SE', attributes: { visits: 20 } },
  ]);
  // A second anonymous profile merged into the same user.
  await post('users', { userId: user(1), anonymousId: anon(4), attributes: {} });
  // An anonymous profile sent after its merge passes new values on to its known profile.
  await post('users', { anonymousId: anon(1), country: 'NO', attributes: { visits: 5, last_login: '2024-02-01T10:00:00Z' } });
  // Bulk requests, userIds repeated within and across requests.
  const bulks = Array.from({ length: bulkRequests }, (_, b) =>
    Array.from({ length: 60 }, (_, i) => ({
      userId: user((b * 7 + i) % 15 + 1),
      email: `u${i}@example.com`,
      birth_date: '1990-05-01T00:00:00+0200',
      opt_in_sms: i % 3 === 0,
      points: b * 100 + i,
      attributes: { plan: ['free', 'pro', 'team'][i % 3] as string, seats: i, newsletter: b % 2 === 0, last_login: `2024-01-0${(i % 9) + 1}T10:00:00Z` },
    })),
  );
  await inParallel(bulks, 4, (bulk) => post('users/bulk', bulk));
  // Events of known profiles, of a merged and an unmerged anonymous profile, and of one never sent.
  const events: unknown[] = [];
  for (let i = 1; i <= 6; i += 1) {
    events.push({ userId: user(i), eventName: 'Viewed', eventTime: `2024-01-0${i}T10:00:00`, eventData: { page: `/p/${i}`, n: i } });
    events.push({ userId: user(i), eventName: 'Clicked', eventData: { at: '2024-01-01T10:00:00Z', tags: ['a', 1] } });
  }
  events.push({ anonymousId: anon(1), eventName: 'Opened' });
  events.push({ anonymousId: anon(3), eventName: 'Opened', eventTime: '2024-01-01T10:00:00+0530' });
  events.push({ anonymousId: anon(50), eventName: 'Opened', eventData: { source: 'ad' } });
  await inParallel(events, 6, (event) => post('events', event));
  // Products submitted repeatedly (the latest wins), with and without a userId; product events.
  const products: unknown[] = [];
  for (let round = 1; round <= 4; round += 1) {
    for (let i = 1; i <= 5; i += 1) {
      products.push({ productId: sku(i), ...(round % 2 ? { userId: user(i) } : {}), properties: { name: `Item ${i}`, price: i * round, inStock: round % 2 === 0 } });
    }
  }
  for (const product of products) await post('products', product);
  const productEvents: unknown[] = [];
  for (let i = 1; i <= 5; i += 1) {
    productEvents.push({ productId: sku(i), userId: null, eventName: 'Viewed' });
    productEvents.push({ productId: sku(i), userId: user(i), eventName: 'Added to cart', eventTime: '2024-06-01T12:00:00+0200', eventData: { quantity: i } });
  }
  await inParallel(productEvents, 6, (item) => post('productsevents', item));
}

/** One round of items posted while projections rebuild: new profiles and merges, and repeats of `base`'s. */
export async function liveRound(app: TestApp, account: Credentials, base: string, round: number): Promise<void> {
  const old = ids(base);
  const fresh = ids(`${base}-r${round}`);
  const post = (endpoint: string, body: unknown) => send(app, account, endpoint, body);
  await Promise.all([
    (async () => {
      await post('users', { anonymousId: fresh.anon(1), city: 'Late', attributes: { visits: round } });
      await post('users', { userId: fresh.user(1), anonymousId: fresh.anon(1), attributes: { plan: 'pro' } });
      await post('users', { userId: old.user(1), anonymousId: old.anon(1), attributes: { seats: round } });
      await post('users', { anonymousId: fresh.anon(1), attributes: { last_login: '2024-05-05T05:05:05Z' } });
    })(),
    post(
      'users/bulk',
      Array.from({ length: 20 }, (_, i) => ({ userId: old.user((round + i) % 15 + 1), attributes: { visits: round * 100 + i } })),
    ),
    post('events', { userId: fresh.user(1), eventName: 'Live', eventData: { round } }),
    post('events', { anonymousId: fresh.anon(2), eventName: 'Live' }),
    post('products', { productId: old.sku((round % 5) + 1), properties: { name: 'Changed', round } }),
    post('productsevents', { productId: old.sku((round % 5) + 1), userId: fresh.user(1), eventName: 'Viewed', eventData: { round } }),
  ]);
}

/** Events applied by a projection, over every account's cursor. */
export async function appliedOf(pool: Pool, projection: Projection): Promise<number> {
  const { rows } = await pool.query<{ projection: string; applied: string }>(appliedByProjection);
  return Number(rows.find((r) => r.projection === projection.name)?.applied ?? 0);
}
