import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createLogger } from '../src/logger.js';
import { projectRoot } from '../src/paths.js';

/**
 * `npm run mutate`: StrykerJS (stryker.config.json) on one embedded PostgreSQL server for the
 * whole run. Stryker starts a test process per worker, and another for each mutant of code that runs
 * when a module loads; each would otherwise start a server of its own. Here each only clones a
 * database (test/support/database.ts, with DATABASE_URL). Arguments are passed on to `stryker run`.
 */
async function main(): Promise<number> {
  const started = Date.now();
  const log = createLogger('warn', 2);
  const dataDir = await mkdtemp(join(tmpdir(), 'tracking-mutate-pg-'));
  const server = await startEmbeddedPostgres(dataDir, log);
  try {
    const stryker = spawn(join(projectRoot, 'node_modules', '.bin', 'stryker'), ['run', ...process.argv.slice(2)], {
      cwd: projectRoot,
      env: { ...process.env, DATABASE_URL: server.url },
      stdio: 'inherit',
    });
    // A Ctrl-C reaches Stryker too (same process group): wait for it to end, then stop the server.
    const onSignal = (): void => undefined;
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
    const code = await new Promise<number>((resolve) => stryker.on('exit', (exitCode) => resolve(exitCode ?? 1)));
    process.stderr.write(`mutation run: ${((Date.now() - started) / 60_000).toFixed(1)} minutes\n`);
    return code;
  } finally {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
