import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type { Pool } from '../../src/db/pool.js';
import { projectRoot } from '../../src/paths.js';
import { sessionName } from '../../projections/runner/checkpoints-sql.js';
import { within } from './eventually.js';
import type { IsolatedHost } from './netns.js';

/** Projection worker processes (`npm run worker`) started by a spec, and their faults: kills and pauses. */
// ---------------------------------------------------------------------------------------------
// Worker processes
// ---------------------------------------------------------------------------------------------

const workerScript = resolve(projectRoot, 'dist/src/worker-main.js');
const projectNode = resolve(projectRoot, 'node_modules/.bin/node');

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  /** `pid@host` as status shows it. */
  name: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What it logged (warnings and errors), for failure messages. */
  output(): string;
}

const started: WorkerProcess[] = [];

export interface StartWorkerOptions {
  /**
   * Runs the worker inside this isolated network host (test/support/netns.ts), so that a spec can
   * cut it off; `databaseUrl` is then one its `urlInside()` gave.
   */
  inside?: IsolatedHost;
}

export function startWorker(databaseUrl: string, env: Record<string, string> = {}, options: StartWorkerOptions = {}): WorkerProcess {
  const command = existsSync(projectNode) ? projectNode : process.execPath;
  const childEnv = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', PROJECTION_POLL_MS: '20', ...env };
  let child: ChildProcess;
  if (options.inside) {
    const inside = options.inside.spawnInside(command, [workerScript], { env: childEnv });
    inside.stdin.end();
    child = inside;
  } else {
    child = spawn(command, [workerScript], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  }
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.on('exit', (code, signal) => done({ code, signal })),
  );
  const pid = child.pid as number;
  const worker = { child, pid, name: `${pid}@${hostname()}`, exited, output: () => output };
  started.push(worker);
  return worker;
}

export async function kill(worker: WorkerProcess, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  worker.child.kill(signal);
  return within(worker.exited, 15_000, `worker ${worker.pid} to exit on ${signal}`);
}


/**
 * Waits until one of the worker's sessions is inside a batch transaction that has written rows
 * (it has a transaction id); false when none was seen within `timeoutMs`.
 */
export async function waitMidBatch(pool: Pool, worker: WorkerProcess, timeoutMs: number): Promise<string | false> {
  const names = [sessionName(worker.name)];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && worker.child.exitCode === null) {
    const { rows } = await pool.query<{ application_name: string }>(
      `SELECT application_name FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = ANY($1) AND backend_xid IS NOT NULL LIMIT 1`,
      [names],
    );
    if (rows[0]) return rows[0].application_name;
  }
  return false;
}

export async function stopStartedWorkers(): Promise<void> {
  // Only the worker processes this spec started, by their pid.
  for (const worker of started.splice(0)) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      // A stopped process gets SIGKILL as well (it need not be resumed to die).
      worker.child.kill('SIGKILL');
      await worker.exited;
    }
  }
}
