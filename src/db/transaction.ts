import type pg from 'pg';
import type { Pool } from './pool.js';

/** What a transaction needs of a connection: `pg.PoolClient`, or a test's stand-in. */
export interface TransactionClient {
  query(text: string): Promise<unknown>;
}

export interface TransactionOptions<T> {
  /** The statement that opens it: `BEGIN` with an isolation level, or with statements sent in the same round trip. */
  begin?: string;
  /** Whether `work`'s result is committed; when not, the transaction is rolled back and the result returned all the same. */
  commits?: (result: T) => boolean;
}

/**
 * Runs `work` in a transaction on one client of `pool`: committed when it resolves, rolled back
 * when it throws. With inTransactionOn, the one place of the project that opens and ends transactions.
 */
export async function inTransaction<T>(pool: Pool, work: (client: pg.PoolClient) => Promise<T>, options: TransactionOptions<T> = {}): Promise<T> {
  const client = await pool.connect();
  // A connection whose ROLLBACK failed is in an unknown state: it is closed, not reused.
  let broken: Error | undefined;
  try {
    return await inTransactionOn(client, work, options, (rollbackError) => {
      broken = rollbackError;
    });
  } finally {
    client.release(broken);
  }
}

/**
 * Runs `work` in a transaction on `client`, a connection the caller holds and releases: committed
 * when it resolves, rolled back when it throws. `rollbackFailed` hears of a ROLLBACK that failed too.
 */
export async function inTransactionOn<C extends TransactionClient, T>(
  client: C,
  work: (client: C) => Promise<T>,
  { begin = 'BEGIN', commits = () => true }: TransactionOptions<T> = {},
  rollbackFailed: (error: Error) => void = () => undefined,
): Promise<T> {
  try {
    await client.query(begin);
    const result = await work(client);
    await client.query(commits(result) ? 'COMMIT' : 'ROLLBACK');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      rollbackFailed(rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)));
    });
    throw error;
  }
}

/**
 * Runs `statement` as a transaction in one round trip: BEGIN, `settings` (`SET LOCAL ...`), the
 * statement and COMMIT sent together (the simple query protocol, so the statement holds its values
 * as literals). Returns the statement's rows; rolled back when any part fails.
 */
export async function inOneRoundTrip<Row>(pool: Pool, settings: readonly string[], statement: string): Promise<Row[]> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    const results = (await client.query(['BEGIN', ...settings, statement, 'COMMIT'].join(';\n'))) as unknown as pg.QueryResult[];
    return (results[settings.length + 1]?.rows ?? []) as Row[];
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
