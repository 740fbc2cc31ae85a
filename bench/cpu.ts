import { readdir, readFile } from 'node:fs/promises';

/**
 * CPU time of the processes under test, from /proc (Linux). Load generator, service and
 * PostgreSQL share the machine, so where the cores go explains the numbers. Elsewhere: null.
 */

// USER_HZ: the unit of /proc/<pid>/stat times; 100 on every mainstream Linux.
const ticksPerSecond = 100;

interface Stat {
  ppid: number;
  /** user + system, including waited-for children, in seconds. */
  cpu: number;
}

async function stat(pid: number): Promise<Stat | null> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields after the last ')' are fixed.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ').map(Number);
    const [ppid, utime, stime, cutime, cstime] = [fields[1], fields[11], fields[12], fields[13], fields[14]];
    if (ppid === undefined || utime === undefined || stime === undefined || cutime === undefined || cstime === undefined) return null;
    return { ppid, cpu: (utime + stime + cutime + cstime) / ticksPerSecond };
  } catch {
    return null;
  }
}

/** CPU seconds of `pid` alone. */
export async function ownCpuSeconds(pid: number): Promise<number | null> {
  return (await stat(pid))?.cpu ?? null;
}

/** CPU seconds of `pid` and of all its descendants (PostgreSQL backends are children of the postmaster). */
export async function treeCpuSeconds(pid: number): Promise<number | null> {
  const root = await stat(pid);
  if (!root) return null;
  let entries: string[];
  try {
    entries = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return root.cpu;
  }
  const stats = new Map<number, Stat>();
  for (const name of entries) {
    const s = await stat(Number(name));
    if (s) stats.set(Number(name), s);
  }
  const inTree = (candidate: number): boolean => {
    for (let current = candidate, hops = 0; current > 1 && hops < 64; hops += 1) {
      if (current === pid) return true;
      current = stats.get(current)?.ppid ?? 0;
    }
    return false;
  };
  let total = 0;
  for (const [candidate, s] of stats) if (inTree(candidate)) total += s.cpu;
  return total;
}

/** The postmaster of the embedded server under `dataDir`, from its pid file. */
export async function postmasterPid(dataDir: string): Promise<number | null> {
  const text = await readFile(`${dataDir}/pg/postmaster.pid`, 'utf8').catch(() => '');
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * Busy CPU seconds of the whole machine, all cores together (/proc/stat): what the processes under
 * test did not use of it went to something else on the machine, which skews the run.
 */
export async function machineBusySeconds(): Promise<number | null> {
  const text = await readFile('/proc/stat', 'utf8').catch(() => '');
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
  const fields = (text.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  if (user === undefined || nice === undefined || system === undefined || irq === undefined || softirq === undefined) return null;
  return (user + nice + system + irq + softirq + (steal ?? 0)) / ticksPerSecond;
}
