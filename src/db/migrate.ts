import { runner } from 'node-pg-migrate';
import { migrationsDir } from '../paths.js';
import type { Logger } from '../logger.js';

/** Applies pending migrations. node-pg-migrate holds an advisory lock, so concurrent starts are safe. */
export async function migrate(databaseUrl: string, log: Logger): Promise<void> {
  const migrationLog = log.child({ component: 'migrate' });
  await runner({
    databaseUrl,
    dir: migrationsDir,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    advisoryLockMode: 'wait',
    logger: {
      debug: (msg: string) => migrationLog.debug(msg),
      info: (msg: string) => migrationLog.debug(msg),
      warn: (msg: string) => migrationLog.warn(msg),
      error: (msg: string) => migrationLog.error(msg),
    },
  });
}
