import { findAccount } from '../accounts/accounts.js';
import type { Account } from '../accounts/account.js';
import { loadConfig } from '../config.js';
import { embeddedDatabaseExists, openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { createPool, type Pool } from '../db/pool.js';
import { createEventStore } from '../eventstore/index.js';
import type { EventStore } from '../eventstore/port.js';
import { createLogger, type Logger } from '../logger.js';

export interface CliContext {
  pool: Pool;
  store: EventStore;
  log: Logger;
}

export interface ContextOptions {
  /**
   * With DATABASE_URL unset and no embedded database in DATA_DIR: make a new empty one (and say
   * so) rather than refuse. Only for commands that make something (an account): a command that
   * reads or replays data would only report on an empty database, most likely the wrong DATA_DIR.
   */
  createDatabase?: boolean;
}

/**
 * The database the service uses: DATABASE_URL, or the embedded server on DATA_DIR (the running
 * service's, or started for the command and stopped after it).
 */
export async function withContext<T>(work: (ctx: CliContext) => Promise<T>, options: ContextOptions = {}): Promise<T> {
  const config = loadConfig();
  // Logs go to stderr: stdout is the command's output.
  const log = createLogger(process.env.LOG_LEVEL || 'warn', 2);
  if (!config.databaseUrl && !options.createDatabase && !(await embeddedDatabaseExists(config.dataDir))) {
    throw new CliError(`no database found in ${config.dataDir}: run this where \`npm start\` runs, or set DATA_DIR to its data directory (or DATABASE_URL)`);
  }
  const database = await openDatabase(config, log, { shared: true });
  if (database.created) process.stderr.write(`tracking: no database found in ${config.dataDir}: created a new empty one\n`);
  try {
    await migrate(database.url, log);
    // A rebuild run here starts a worker: its lanes, its heartbeat, discovery, the lag report, an index
    // build at the end, the store's reads and the command's own polls (projections/index.ts).
    const pool = createPool(database.url, 10, Math.max(config.queryTimeoutMs, 60_000));
    const store = createEventStore(config, pool, log);
    try {
      return await work({ pool, store, log });
    } finally {
      await store.close();
      await pool.end();
    }
  } finally {
    await database.stop();
  }
}

/** A failure the user can act on: printed without a stack trace, exit code 1 (2 for usage). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** The account an `--account <license|id>` names; exit 1 when there is none. */
export async function accountArgument(pool: Pool, given: string): Promise<Account> {
  const account = await findAccount(pool, given, { orId: true });
  if (!account) throw new CliError(`no account with the license code or id ${given}`);
  return account;
}
