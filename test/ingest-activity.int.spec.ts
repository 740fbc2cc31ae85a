import { expect } from 'chai';
import { createAccount } from '../src/accounts/accounts.js';
import { createPool, type Pool } from '../src/db/pool.js';
import { defaultActivitySettings, IngestActivity, type RejectedItem } from '../src/activity/recorder.js';
import { activityCounts, recentWarnings, warningGroups } from '../src/activity/queries.js';
import { countsPerHour, countsPerMinute } from '../src/activity/sql.js';
import { createLogger } from '../src/logger.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

/** The ingest activity recorder on a real PostgreSQL: the per-account cap on rejected items, and retention. */

const item = (n: number): RejectedItem => ({
  endpoint: 'events',
  reason: 'schema',
  field: 'eventName',
  status: 400,
  message: `item ${n} is invalid`,
  excerpt: { text: `{"n":${n}}`, truncated: false },
});

describe('ingest activity recorder (int)', () => {
  let database: TestDatabase;
  let pool: Pool;
  let activity: IngestActivity | undefined;
  let accountId: string;

  beforeEach(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 4);
    accountId = (await createAccount(pool, 'acme')).id;
  });

  afterEach(async () => {
    await activity?.close();
    await pool.end();
    await database.drop();
  });

  it('keeps the latest 1,000 rejected items per account by default', () => {
    expect(defaultActivitySettings.itemsPerAccount).to.equal(1_000);
  });

  it('keeps only the latest itemsPerAccount rejected items of each account, counting them all', async () => {
    activity = new IngestActivity(pool, createLogger('silent'), { itemsPerAccount: 5, flushEveryMs: 60_000 });
    const other = (await createAccount(pool, 'other')).id;
    for (let n = 1; n <= 4; n += 1) activity.rejected(accountId, item(n));
    activity.rejected(other, item(100));
    await activity.flush();
    for (let n = 5; n <= 12; n += 1) activity.rejected(accountId, item(n));
    await activity.flush();

    const recent = (await recentWarnings(pool, accountId, 1_000)).warnings;
    expect(recent.map((w) => w.excerpt)).to.deep.equal([12, 11, 10, 9, 8].map((n) => `{"n":${n}}`));
    expect((await recentWarnings(pool, other, 1_000)).warnings.map((w) => w.excerpt)).to.deep.equal(['{"n":100}']);
    const [group] = await warningGroups(pool, accountId);
    expect(group?.count).to.equal(12);
    expect(group?.examples.map((e) => e.excerpt)).to.deep.equal([12, 11, 10].map((n) => `{"n":${n}}`));
    const { perMinute } = await activityCounts(pool, accountId);
    expect(perMinute.reduce((total, b) => total + b.rejected, 0)).to.equal(12);
  });

  it('adds the counts of each flush to those already written', async () => {
    activity = new IngestActivity(pool, createLogger('silent'), { flushEveryMs: 60_000 });
    const minute = Date.parse('2026-01-01T10:00:00Z');
    activity.accepted(accountId, 'users/bulk', 100, Date.now());
    await activity.flush();
    activity.accepted(accountId, 'users/bulk', 5, Date.now());
    activity.accepted(accountId, 'users', 1, minute);
    await activity.flush();
    const { rows } = await pool.query<{ endpoint: string; accepted: number }>(
      'SELECT endpoint, accepted FROM ingest_activity_minutes WHERE account_id = $1 ORDER BY minute',
      [accountId],
    );
    expect(rows).to.deep.equal([
      { endpoint: 'users', accepted: 1 },
      { endpoint: 'users/bulk', accepted: 105 },
    ]);
  });

  it('deletes per-minute counts after 7 days and rejections after 30', async () => {
    activity = new IngestActivity(pool, createLogger('silent'), { flushEveryMs: 60_000 });
    await pool.query(
      `INSERT INTO ingest_activity_minutes (account_id, minute, endpoint, accepted, rejected) VALUES
         ($1, date_trunc('minute', now() - interval '8 days'), 'events', 1, 0),
         ($1, date_trunc('minute', now() - interval '6 days'), 'events', 2, 0)`,
      [accountId],
    );
    await pool.query(
      `INSERT INTO ingest_rejections_hourly (account_id, hour, endpoint, reason, count, last_seen_at) VALUES
         ($1, date_trunc('hour', now() - interval '31 days'), 'events', 'old', 1, now() - interval '31 days'),
         ($1, date_trunc('hour', now() - interval '29 days'), 'events', 'recent', 1, now() - interval '29 days')`,
      [accountId],
    );
    await pool.query(
      `INSERT INTO ingest_rejected_items (account_id, at, endpoint, reason, status, message) VALUES
         ($1, now() - interval '31 days', 'events', 'old', 400, 'old'),
         ($1, now() - interval '29 days', 'events', 'recent', 400, 'recent')`,
      [accountId],
    );
    await activity.pruneExpired();
    const left = async (table: string, column: string): Promise<unknown[]> =>
      (await pool.query<Record<string, unknown>>(`SELECT ${column} FROM ${table} ORDER BY 1`)).rows.map((r) => r[column]);
    expect(await left('ingest_activity_minutes', 'accepted')).to.deep.equal([2]);
    expect(await left('ingest_rejections_hourly', 'reason')).to.deep.equal(['recent']);
    expect(await left('ingest_rejected_items', 'reason')).to.deep.equal(['recent']);
    // The 6-day-old minute is within the 168 hours of the overview.
    expect((await activityCounts(pool, accountId)).perHour.map((b) => b.accepted)).to.deep.equal([2]);
  });

  it('writes what is pending when closed', async () => {
    activity = new IngestActivity(pool, createLogger('silent'), { flushEveryMs: 60_000 });
    activity.rejected(accountId, { ...item(1), excerpt: null });
    await activity.close();
    expect((await recentWarnings(pool, accountId, 10)).warnings.map((w) => w.message)).to.deep.equal(['item 1 is invalid']);
  });
  it('reads the overview per minute and per hour in one snapshot: a flush between the two reads shows in neither', async () => {
    activity = new IngestActivity(pool, createLogger('silent'), { flushEveryMs: 60_000 });
    const recorder = activity;
    recorder.accepted(accountId, 'events', 1);
    await recorder.flush();
    // Once the per-minute read has answered, another flush commits before the per-hour read runs.
    let minutesRead: () => void = () => undefined;
    const minutesAnswered = new Promise<void>((resolve) => (minutesRead = resolve));
    let flushedBetween = false;
    const hooked = new WeakSet<object>();
    pool.on('acquire', (client) => {
      if (hooked.has(client)) return;
      hooked.add(client);
      const query = client.query.bind(client) as (text: unknown, values?: unknown) => Promise<unknown>;
      const hookedQuery = async (text: unknown, values?: unknown): Promise<unknown> => {
        if (text === countsPerHour && !flushedBetween) {
          flushedBetween = true;
          await minutesAnswered;
          recorder.accepted(accountId, 'events', 1);
          await recorder.flush();
        }
        const result = await query(text, values);
        if (text === countsPerMinute) minutesRead();
        return result;
      };
      // pool.query calls with a callback, a client's own caller without.
      Object.assign(client, {
        query: (text: unknown, values?: unknown, callback?: (error: unknown, result?: unknown) => void) => {
          if (!callback) return hookedQuery(text, values);
          hookedQuery(text, values).then((result) => callback(undefined, result), callback);
          return undefined;
        },
      });
    });
    const accepted = (buckets: { accepted: number }[]): number => buckets.reduce((total, b) => total + b.accepted, 0);

    const during = await activityCounts(pool, accountId);
    expect(flushedBetween).to.equal(true);
    expect([accepted(during.perMinute), accepted(during.perHour)]).to.deep.equal([1, 1]);
    const after = await activityCounts(pool, accountId);
    expect([accepted(after.perMinute), accepted(after.perHour)]).to.deep.equal([2, 2]);
  });
});
