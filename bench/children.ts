import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { postmasterPid } from './cpu.js';
import { watchRss, type RssPeak } from './rss.js';

/** A server started by the bench as a child process, with the tail of its output kept for the report. */
export interface Child {
  name: string;
  process: ChildProcess;
  /** Output lines at level warn or above (pino JSON) or not JSON at all. */
  problems: string[];
  problemCount: number;
  exited: Promise<number | null>;
  /** Its resident memory at the highest sample so far. */
  rss: RssPeak;
}

const live = new Set<Child>();

// Last resort when the bench dies without reaching its finally blocks: SIGTERM (not SIGKILL) so
// the service still stops its embedded PostgreSQL itself.
process.once('exit', () => {
  for (const child of live) child.process.kill('SIGTERM');
});
const interruption = new AbortController();
/** Aborted on the first SIGINT/SIGTERM/SIGHUP, so the run stops its load and cleans up; a second one exits at once. */
export const interrupted = interruption.signal;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    if (!interruption.signal.aborted) return interruption.abort(new Error(`${signal} received`));
    process.exit(130);
  });
}

function isProblem(line: string): boolean {
  try {
    const level = (JSON.parse(line) as { level?: unknown }).level;
    return typeof level !== 'number' || level >= 40;
  } catch {
    return true;
  }
}

/** With `ipc`, the child can talk to this process with process.send (child.process.on('message')). */
export function startChild(name: string, script: string, env: NodeJS.ProcessEnv, cwd: string, { ipc = false, nodeFlags = [] as string[] } = {}): Child {
  const child = spawn(process.execPath, [...nodeFlags, script], { cwd, env, stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const rss: RssPeak = child.pid === undefined ? { maxBytes: null, during: '-', samples: 0 } : watchRss(child.pid, exited);
  const entry: Child = { name, process: child, problems: [], problemCount: 0, exited, rss };
  live.add(entry);
  void exited.then(() => live.delete(entry));
  const carry = { out: '', err: '' };
  const collect = (chunk: Buffer, stream: 'out' | 'err'): void => {
    // Lines may span chunks: keep the unfinished end for the next one.
    const lines = (carry[stream] + chunk.toString('utf8')).split('\n');
    carry[stream] = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '' || !isProblem(line)) continue;
      entry.problemCount += 1;
      // Only the first few: a flood of identical errors would otherwise fill memory.
      if (entry.problems.length < 10) entry.problems.push(line.slice(0, 500));
    }
  };
  child.stdout?.on('data', (chunk: Buffer) => collect(chunk, 'out'));
  child.stderr?.on('data', (chunk: Buffer) => collect(chunk, 'err'));
  return entry;
}

/** Polls `url` until it answers 200; fails early if the child exits. */
export async function waitHealthy(child: Child, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let gone = false;
  void child.exited.then(() => (gone = true));
  while (Date.now() < deadline) {
    interrupted.throwIfAborted();
    if (gone) throw new Error(`${child.name} exited before it was ready:\n${child.problems.join('\n')}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await sleep(200);
  }
  throw new Error(`${child.name} not healthy at ${url} after ${timeoutMs} ms:\n${child.problems.join('\n')}`);
}

/**
 * SIGTERM and wait for the exit. If the child hangs it is killed, and the PostgreSQL server it
 * started (if any, from `dataDir`) is stopped so that no orphan outlives the bench.
 */
export async function stopChild(child: Child, timeoutMs: number, dataDir?: string): Promise<string> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return `already exited (${child.process.exitCode})`;
  child.process.kill('SIGTERM');
  const started = Date.now();
  const code = await Promise.race([child.exited, sleep(timeoutMs, 'timeout' as const, { ref: false })]);
  if (code !== 'timeout') return `exit ${code ?? child.process.signalCode} after ${Date.now() - started} ms`;
  child.process.kill('SIGKILL');
  await child.exited;
  if (dataDir) {
    const pid = await postmasterPid(dataDir);
    try {
      // SIGINT is PostgreSQL's "fast shutdown".
      if (pid !== null) process.kill(pid, 'SIGINT');
    } catch {
      // Already gone with its parent.
    }
  }
  return `did not exit within ${timeoutMs} ms, killed`;
}
