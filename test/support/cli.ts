import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/paths.js';
import type { Credentials, TestApp } from './app.js';

const run = promisify(execFile);
const node = join(projectRoot, 'node_modules', '.bin', 'node');
const bin = join(projectRoot, 'bin', 'tracking.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tracking <args>` as a user would, on the database and event store of `app`. */
export function tracking(app: TestApp, ...args: string[]): Promise<CliResult> {
  const { eventStoreUrl } = app.services.config;
  return runTracking({ DATABASE_URL: app.database.url, ...(eventStoreUrl && { EVENTSTORE_URL: eventStoreUrl }) }, args);
}

/** `tracking <args>` on the embedded database of `dataDir`, as a user runs it without DATABASE_URL. */
export function trackingOnDataDir(dataDir: string, ...args: string[]): Promise<CliResult> {
  return runTracking({ DATA_DIR: dataDir, LOG_FORMAT: 'json', DATABASE_URL: undefined, EVENTSTORE_URL: undefined }, args);
}

/**
 * `tracking import <args>` as a user runs it against the service of `app`: over HTTP, with the
 * account's credentials in the environment and no database settings.
 */
export function trackingImport(app: Pick<TestApp, 'baseUrl'>, account: Credentials, ...args: string[]): Promise<CliResult> {
  return runTracking(
    {
      TRACKING_URL: app.baseUrl,
      TRACKING_LICENSE_CODE: account.licenseCode,
      TRACKING_ACCESS_TOKEN: account.accessToken,
      DATABASE_URL: undefined,
      EVENTSTORE_URL: undefined,
    },
    args,
  );
}

/** `settings` are added to this process's environment; a setting given as undefined is removed from it. */
async function runTracking(settings: NodeJS.ProcessEnv, args: string[]): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...settings };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  try {
    const { stdout, stderr } = await run(node, [bin, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
