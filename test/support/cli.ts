import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/paths.js';
import type { TestApp } from './app.js';

const run = promisify(execFile);
const node = join(projectRoot, 'node_modules', '.bin', 'node');
const bin = join(projectRoot, 'bin', 'tracking.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `tracking <args>` as a user would, on the database and event store of `app`. */
export async function tracking(app: TestApp, ...args: string[]): Promise<CliResult> {
  const { eventStoreUrl } = app.services.config;
  const env = { ...process.env, DATABASE_URL: app.database.url, LOG_LEVEL: 'warn', ...(eventStoreUrl && { EVENTSTORE_URL: eventStoreUrl }) };
  try {
    const { stdout, stderr } = await run(node, [bin, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
