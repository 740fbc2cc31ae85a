import pg from 'pg';

export type Pool = pg.Pool;

// int8 (bigint) columns come back as strings by default; positions fit in a JS number for any
// realistic store (2^53 events), and numbers keep the replies and read models simple.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

/**
 * A statement running longer than `queryTimeoutMs` is cancelled by the server (so a cancelled append
 * stores nothing); a server that does not answer at all is given up a second later by the client.
 * Either way the request gets 503 instead of never ending.
 */
export function createPool(connectionString: string, max = 20, queryTimeoutMs = 10_000): Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    connectionTimeoutMillis: 5_000,
    statement_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1_000,
  });
  // A client losing its connection must not crash the process, whether idle in the pool or held
  // (a projection worker keeps one for as long as it runs): its next query reports the loss.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** Connection string of another database on the same server. */
export function withDatabase(connectionString: string, database: string): string {
  const url = new URL(connectionString);
  url.pathname = `/${database}`;
  return url.toString();
}
