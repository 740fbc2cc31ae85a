import { expect } from 'chai';
import { createPool, type Pool } from '../src/db/pool.js';
import { createLogger } from '../src/logger.js';
import { RebuildControl } from '../projections/runner/control.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

describe('an account rebuilt, as the workers see it (int)', () => {
  let database: TestDatabase;
  let pool: Pool;

  before(async () => {
    database = await freshDatabase();
    pool = createPool(database.url, 2, 10_000);
  });
  after(async () => {
    await pool.end();
    await database.drop();
  });

  it('is replayed once for each reset, microseconds and all, however often the worker looks', async () => {
    const replayed: string[] = [];
    const control = new RebuildControl(pool, [], { backlog: () => Promise.reject(new Error('not read')) }, createLogger('silent'), {
      onRestarted: () => undefined,
      onAccountReset: (accountId) => replayed.push(accountId),
    });
    const client = await pool.connect();
    try {
      await control.load(client);
      await client.query("INSERT INTO projection_accounts (account_id, part) VALUES ('acct-a', 1), ('acct-b', 2)");
      // A time past its milliseconds, as clock_timestamp() writes them.
      await client.query("UPDATE projection_accounts SET reset_at = '2026-11-28 10:00:00.123456+00' WHERE account_id = 'acct-a'");
      for (let look = 0; look < 3; look += 1) await control.check(client, true);
      expect(replayed).to.deep.equal(['acct-a']);
      await client.query("UPDATE projection_accounts SET reset_at = '2026-11-28 10:00:00.123457+00' WHERE account_id = 'acct-b'");
      for (let look = 0; look < 3; look += 1) await control.check(client, true);
      expect(replayed).to.deep.equal(['acct-a', 'acct-b']);
      // A worker started later replays none of the resets before it.
      const later: string[] = [];
      const fresh = new RebuildControl(pool, [], { backlog: () => Promise.reject(new Error('not read')) }, createLogger('silent'), {
        onRestarted: () => undefined,
        onAccountReset: (accountId) => later.push(accountId),
      });
      await fresh.load(client);
      await fresh.check(client, true);
      expect(later).to.deep.equal([]);
    } finally {
      client.release();
    }
  });
});
