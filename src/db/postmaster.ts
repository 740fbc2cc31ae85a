import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** postmaster.pid, which a running server keeps in its data directory. */
export interface LockFile {
  pid: number;
  port: number;
  /** "starting", "ready", "stopping", ...; empty while it is being written. */
  status: string;
}

export function readLockFile(clusterDir: string): LockFile | null {
  try {
    // Lines: pid, data directory, start time, port, socket directory, listen address, shared memory key, status.
    const lines = readFileSync(join(clusterDir, 'postmaster.pid'), 'utf8').split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port)) return null;
    return { pid, port, status: (lines[7] ?? '').trim() };
  } catch {
    return null;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, under another user (`postgres`, when this process runs as root and the other did not).
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** A process's parent and command line (from /proc on Linux, from ps elsewhere); null when it is gone. */
function processInfo(pid: number): { ppid: number; args: string[] } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (command) state ppid ...": the command may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    return { ppid, args };
  } catch {
    try {
      const line = execFileSync('ps', ['-o', 'ppid=,command=', '-p', String(pid)], { encoding: 'utf8' }).trim();
      const [ppid, ...args] = line.split(/\s+/);
      return line ? { ppid: Number(ppid), args } : null;
    } catch {
      return null;
    }
  }
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}

/**
 * The postmaster running on `clusterDir`, with its parent's pid; null when postmaster.pid is
 * missing or names a process that is not a postgres of this directory (a pid reused after a crash).
 */
export function runningPostmaster(clusterDir: string): (LockFile & { ppid: number }) | null {
  const lock = readLockFile(clusterDir);
  if (!lock) return null;
  const info = processInfo(lock.pid);
  if (!info || basename(info.args[0] ?? '') !== 'postgres') return null;
  const dataDirArg = info.args.indexOf('-D');
  if (dataDirArg < 0 || !samePath(info.args[dataDirArg + 1] ?? '', clusterDir)) return null;
  return { ...lock, ppid: info.ppid };
}

/**
 * Whether postmaster.pid names a live process that is provably not a postgres of this directory:
 * its pid was reused after a crash, and PostgreSQL, seeing it alive, would refuse to start.
 */
export function lockFileOfReusedPid(clusterDir: string): boolean {
  const lock = readLockFile(clusterDir);
  if (!lock || !isAlive(lock.pid)) return false;
  const info = processInfo(lock.pid);
  return info !== null && runningPostmaster(clusterDir) === null;
}

/** Waits for a process to end, up to `ms`; whether it did. */
export async function waitForExit(pid: number, ms: number): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await sleep(50)) if (!isAlive(pid)) return true;
  return !isAlive(pid);
}

/**
 * Stops a postmaster this process did not start (left running by one that was killed): a fast
 * shutdown (SIGINT: transactions in progress roll back, committed ones are kept, a clean
 * checkpoint), then an immediate one (SIGQUIT: crash recovery at the next start) if it hangs.
 */
export async function stopPostmaster(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  if (await waitForExit(pid, 60_000)) return;
  process.kill(pid, 'SIGQUIT');
  if (!(await waitForExit(pid, 10_000))) throw new Error(`the embedded PostgreSQL (pid ${pid}) does not stop`);
}
