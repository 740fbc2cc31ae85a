import pg from 'pg';
import { isUnavailableError } from './errors.js';

export type Pool = pg.Pool;

/**
 * Where a server is: a connection string, or a function giving it anew for each connection (an
 * embedded server started again elsewhere is found by the connections made after it moved).
 */
export type ServerAddress = string | (() => string);

// int8 (bigint) columns come back as strings by default; positions fit in a JS number for any
// realistic store (2^53 events), and numbers keep the replies and read models simple.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

/**
 * A statement running longer than `queryTimeoutMs` is cancelled by the server (so a cancelled append
 * stores nothing); a server that does not answer at all is given up a second later by the client.
 * Either way the request gets 503 instead of never ending.
 */
export function createPool(address: ServerAddress, max = 20, queryTimeoutMs = 10_000): Pool {
  const locate = typeof address === 'string' ? () => address : address;
  const pool = new pg.Pool({
    connectionString: locate(),
    // A connection string in the configuration overrides every other setting: each new client gets the current one.
    ...(typeof address !== 'string' && {
      Client: class extends pg.Client {
        constructor(config?: pg.ClientConfig) {
          super({ ...config, connectionString: locate() });
        }
      },
    }),
    max,
    connectionTimeoutMillis: 5_000,
    statement_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1_000,
    onConnect: checkClientWhileRunning,
  });
  // A client losing its connection must not crash the process, whether idle in the pool or held
  // (a projection worker keeps one for as long as it runs): its next query reports the loss.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/**
 * A statement waiting on a lock does not read from its client, so the server would not see that the
 * client died (a process killed) until the lock freed or the statement timed out: meanwhile its
 * transaction keeps its locks and its transaction id, which holds back the catch-up of every
 * account (docs/projections.md, The fence). Checked every second while a statement runs, the
 * session ends within a second of the client. Run before the connection is handed out. A server
 * without the check (PostgreSQL 13 and older, 14 outside Linux, Windows) refuses the setting: the
 * session goes on without it. Anything else (the connection lost, no answer in time) fails the
 * connection.
 */
async function checkClientWhileRunning(client: pg.ClientBase): Promise<void> {
  // pg reads a query's own query_timeout; its types do not list it.
  const setting: pg.QueryConfig & { query_timeout: number } = { text: 'SET client_connection_check_interval = 1000', query_timeout: 2_000 };
  try {
    await client.query(setting);
  } catch (error) {
    if (!(error instanceof pg.DatabaseError)) throw error;
  }
}

/**
 * `pool.query`, but a statement the server refused leaves its connection in the pool. pg.Pool's
 * own query closes the connection on any error; for the errors an append expects (a position or an
 * id already stored, a deadlock) that meant a new connection, a fork of the server, per refusal:
 * two processes appending to the same streams spent more on connecting than on appending
 * (docs/performance.md, Several API processes writing the same people). An error that did not
 * come from the server (a lost connection, the client's own timeout), or that says the server is
 * going away or is no longer the one to write to (isUnavailableError: a FATAL shutdown, a standby
 * after a failover), still closes it: the connection the server is ending must not go to the next
 * caller before pg has seen its end.
 */
export async function queryKeepingConnection<R extends pg.QueryResultRow>(pool: Pool, query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  const client = await pool.connect();
  // As pool.query does: a socket error while the statement runs is the statement's, not the process's.
  const ignore = (): void => undefined;
  client.on('error', ignore);
  try {
    const result = await client.query<R>(query);
    client.release();
    return result;
  } catch (error) {
    const refused = error instanceof pg.DatabaseError && !isUnavailableError(error);
    client.release(refused ? undefined : error instanceof Error ? error : true);
    throw error;
  } finally {
    client.removeListener('error', ignore);
  }
}

/** Connection string of another database on the same server. */
export function withDatabase(connectionString: string, database: string): string;
export function withDatabase(address: ServerAddress, database: string): ServerAddress;
export function withDatabase(address: ServerAddress, database: string): ServerAddress {
  if (typeof address !== 'string') return () => withDatabase(address(), database);
  const connectionString = address;
  const url = new URL(connectionString);
  url.pathname = `/${database}`;
  return url.toString();
}

// pg honours query_timeout per query, though its QueryConfig type does not declare it.
const ping = { text: 'SELECT 1', query_timeout: 2_000 };

/** A health check: it must answer quickly even when the database hangs, so it gives up after 2 s. */
export async function quickPing(pool: Pool): Promise<void> {
  await pool.query(ping);
}
