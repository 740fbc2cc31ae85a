import type { Pool } from '../../src/db/pool.js';
import { projections } from '../../projections/index.js';
import type { Credentials, TestApp } from './app.js';
import { eventually } from './eventually.js';
import { send } from './projection-harness.js';

/**
 * What the specs of one account's rebuild share (API, dashboard, CLI): a small workload touching
 * every read model, the account's cursors, and a hold that stops the replay of one account's leads
 * for as long as a spec looks at it.
 */

export async function accountIdOf(app: TestApp, account: Credentials): Promise<string> {
  const { rows } = await app.pool.query<{ id: string }>('SELECT id::text AS id FROM accounts WHERE license_code = $1', [account.licenseCode]);
  if (!rows[0]) throw new Error(`no account ${account.licenseCode}`);
  return rows[0].id;
}

/** A known user merged with an anonymous one, their events, a product and a product event: every read model gets rows. */
export async function smallWorkload(app: TestApp, account: Credentials, tag: string): Promise<void> {
  await send(app, account, 'users', { anonymousId: `anon-${tag}`, city: 'Oslo', attributes: { plan: 'free' } });
  await send(app, account, 'users', { userId: `user-${tag}`, anonymousId: `anon-${tag}`, firstName: tag, attributes: { visits: 3 } });
  await send(app, account, 'events/bulk', [
    { userId: `user-${tag}`, eventName: 'Viewed', eventData: { page: '/a' } },
    { anonymousId: `anon-${tag}`, eventName: 'Opened' },
  ]);
  await send(app, account, 'products', { productId: `sku-${tag}`, userId: `user-${tag}`, properties: { price: 5 } });
  await send(app, account, 'productsevents', { productId: `sku-${tag}`, userId: `user-${tag}`, eventName: 'Added to cart' });
}

export interface CursorRow {
  projection: string;
  checkpoint: string | null;
  events_applied: string;
  updated_at: Date;
  caught_up_at: Date | null;
}

/** The account's cursor of each projection, as the workers keep them. */
export async function cursorsOf(pool: Pool, accountId: string): Promise<CursorRow[]> {
  const { rows } = await pool.query<CursorRow>(
    'SELECT projection, checkpoint, events_applied::text, updated_at, caught_up_at FROM projection_account_checkpoints WHERE account_id = $1 ORDER BY projection',
    [accountId],
  );
  return rows;
}

/**
 * Resolves once each account has a cursor of every projection and the track index holds every
 * stored event, and then nothing is behind. `app.projected()` alone was seen (once, in a full run
 * of the suite) to answer while an account's products and track-index cursors were not made yet.
 */
export async function accountsProjected(app: TestApp, accountIds: readonly string[]): Promise<void> {
  const stored = (await app.events()).length;
  await eventually(
    async () => {
      const { rows } = await app.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM track_index');
      if (rows[0]?.n !== stored) return false;
      for (const accountId of accountIds) if ((await cursorsOf(app.pool, accountId)).length !== projections.length) return false;
      return true;
    },
    20_000,
    () => `the track index or a cursor of ${accountIds.join(', ')} is missing`,
  );
  await app.projected();
}

export async function leadRowsOf(pool: Pool, accountId: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM leads WHERE account_id = $1', [accountId]);
  return rows[0]?.n ?? 0;
}

let holds = 0;

/**
 * Until `release()`, a row of the account's leads written by a worker waits (a trigger takes a
 * shared advisory lock this connection holds): the replay of its leads stops at its first batch,
 * while every other account and projection goes on. Made after the read models have caught up.
 */
export async function holdLeadsOf(pool: Pool, accountId: string): Promise<{ release(): Promise<void> }> {
  holds += 1;
  const key = 731_100 + holds;
  const name = `hold_leads_${holds}`;
  const holder = await pool.connect();
  try {
    await holder.query('SELECT pg_advisory_lock($1)', [key]);
    await pool.query(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock_shared(${key}); RETURN NEW; END $$`);
    await pool.query(`CREATE TRIGGER ${name} BEFORE INSERT ON leads FOR EACH ROW WHEN (NEW.account_id = '${accountId}') EXECUTE FUNCTION ${name}()`);
  } catch (error) {
    holder.release();
    throw error;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await holder.query('SELECT pg_advisory_unlock($1)', [key]);
      } finally {
        holder.release();
      }
      await pool.query(`DROP TRIGGER ${name} ON leads`);
      await pool.query(`DROP FUNCTION ${name}()`);
    },
  };
}
