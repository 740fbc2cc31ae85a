import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { promisify } from 'node:util';
import { until } from './eventually.js';
import { startTcpForwarder, type TcpForwarder } from './tcp-forwarder.js';

/**
 * A host of its own on the network for processes under test: a network namespace (`ip netns`)
 * whose only link is a veth pair to this machine, so that a test can cut that link while the
 * processes go on running. Their TCP connections then get no packets at all (no reset, no ICMP
 * error): queries hang, and new connections neither connect nor fail, as when the network between
 * two machines fails. Once the link is restored, TCP resumes each connection at its next
 * retransmission, which backs off exponentially: up to about as long after the restore as the cut lasted
 * (a cut of minutes outlasts TCP's patience, and the connections time out instead). Needs root (CI
 * runs as root) and iproute2.
 *
 * Each host has its own /30 out of 198.18.0.0/15 (RFC 2544: set aside for testing network devices,
 * routed nowhere): `outsideAddress` (.1) on this machine's end, `insideAddress` (.2) inside. Inside,
 * nothing else is reachable: not this machine's loopback, where the tests' PostgreSQL listens. A
 * TCP forwarder in this process on the outside address bridges to it (`urlInside`).
 */
export interface IsolatedHost {
  readonly name: string;
  /** The `ip netns` name, for `ip netns exec` and `ip -n`. */
  readonly namespace: string;
  /** The veth end on this machine's side, and the one inside the namespace. */
  readonly outsideLink: string;
  readonly insideLink: string;
  readonly outsideAddress: string;
  readonly insideAddress: string;
  /**
   * The connection URL `url` as a process inside reaches it: through a forwarder (started on the
   * first call for that host and port) listening on the outside address.
   */
  urlInside(url: string): Promise<string>;
  /** Runs `command` inside the namespace; the returned child's pid is the command's own (`ip netns exec` execs it). */
  spawnInside(command: string, args: readonly string[], options?: InsideOptions): ChildProcessWithoutNullStreams;
  /** Takes the link down: from now on no packet passes either way, and senders are told nothing. */
  cut(): Promise<void>;
  /** Brings the link up again and returns once both ends carry packets. */
  restore(): Promise<void>;
  /** Kills every process inside (spawned here or not), stops the forwarders, deletes the namespace, the veth pair and the route. */
  destroy(): Promise<void>;
}

export interface InsideOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

const firstAddress = 198 * 2 ** 24 + 18 * 2 ** 16;
const subnetsInRange = 2 ** 17 / 4;
/**
 * While the link is down its routes are gone, and packets for the inside address would follow the
 * default route out of the machine (and maybe get an answer from there). This route, of lower
 * priority than the link's own, keeps them here: a new connection there is refused at once
 * (EHOSTUNREACH), and the retransmissions of an established one fail quietly while TCP goes on.
 */
const fallbackMetric = '4242';
const namePattern = /^[a-z0-9]{1,10}$/;
let namesGiven = 0;

const execFileAsync = promisify(execFile);

async function ip(...args: string[]): Promise<string> {
  try {
    return (await execFileAsync('ip', args)).stdout;
  } catch (error) {
    const failed = error as NodeJS.ErrnoException & { stderr?: string };
    if (failed.code === 'ENOENT') throw new Error('an isolated network host needs the `ip` command (iproute2), which is not installed');
    throw new Error(`ip ${args.join(' ')} failed: ${failed.stderr?.trim() || failed.message}`);
  }
}

function dotted(address: number): string {
  return [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join('.');
}

function numeric(address: string): number {
  return address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

/** The [first, last] addresses of every IPv4 route and address of this machine, but the default route. */
async function addressesInUse(): Promise<Array<[number, number]>> {
  const routes = JSON.parse(await ip('-j', '-4', 'route', 'show', 'table', 'all')) as Array<{ dst: string }>;
  const links = JSON.parse(await ip('-j', '-4', 'address', 'show')) as Array<{ addr_info?: Array<{ local: string; prefixlen: number }> }>;
  const prefixes = [
    ...routes.filter((route) => route.dst !== 'default').map((route) => route.dst),
    ...links.flatMap((link) => link.addr_info ?? []).map((address) => `${address.local}/${address.prefixlen}`),
  ];
  return prefixes.map((prefix) => {
    const [address = '', length = '32'] = prefix.split('/');
    const size = 2 ** (32 - Number(length));
    const first = numeric(address) - (numeric(address) % size);
    return [first, first + size - 1];
  });
}

/**
 * A /30 that no route or address of this machine overlaps, drawn at random so that concurrent test
 * runs (each checking before the other has added its own) almost never draw the same.
 */
async function freeSubnet(): Promise<number> {
  const used = await addressesInUse();
  for (let draw = 0; draw < 32; draw += 1) {
    const first = firstAddress + 4 * randomInt(subnetsInRange);
    if (used.every(([from, to]) => to < first || from > first + 3)) return first;
  }
  throw new Error('no free /30 in 198.18.0.0/15 for an isolated network host: routes of this machine cover it');
}

async function namespaceExists(namespace: string): Promise<boolean> {
  const namespaces = JSON.parse((await ip('-j', 'netns', 'list')) || '[]') as Array<{ name: string }>;
  return namespaces.some((entry) => entry.name === namespace);
}

/** The first address of the /30 on `link` (this machine's end of a host's veth pair), null when there is no such link. */
async function subnetOn(link: string): Promise<number | null> {
  const links = JSON.parse(await ip('-j', '-4', 'address', 'show')) as Array<{ ifname: string; addr_info?: Array<{ local: string }> }>;
  const local = links.find((entry) => entry.ifname === link)?.addr_info?.[0]?.local;
  return local === undefined ? null : numeric(local) - (numeric(local) % 4);
}

async function linkExists(link: string): Promise<boolean> {
  const links = JSON.parse(await ip('-j', 'link', 'show')) as Array<{ ifname: string }>;
  return links.some((entry) => entry.ifname === link);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

interface Names {
  namespace: string;
  outsideLink: string;
  insideLink: string;
}

function namesOf(name: string): Names {
  // Link names have at most 15 characters: hence names of at most 10.
  return { namespace: `tracking-${name}`, outsideLink: `tr-${name}-o`, insideLink: `tr-${name}-i` };
}

/**
 * Removes what a host of these names left: its processes (which would keep the namespace, and the
 * veth end in it, alive past `ip netns delete`), its fallback route, the veth pair, the namespace.
 * Each step is skipped when there is nothing to remove, so it also clears half-made leftovers.
 */
async function removeHost({ namespace, outsideLink }: Names, knownSubnet: number | null): Promise<void> {
  const namespaced = await namespaceExists(namespace);
  if (namespaced) {
    const pids = (await ip('netns', 'pids', namespace)).split('\n').filter((line) => line.trim() !== '');
    for (const pid of pids) killQuietly(Number(pid));
  }
  const subnet = knownSubnet ?? (await subnetOn(outsideLink));
  if (subnet !== null) await ip('route', 'del', 'unreachable', `${dotted(subnet)}/30`, 'metric', fallbackMetric).catch(() => undefined);
  // Deleting one end of a veth pair deletes both.
  if (await linkExists(outsideLink)) await ip('link', 'del', outsideLink);
  if (namespaced) await ip('netns', 'delete', namespace);
}

async function operstate(namespace: string | null, link: string): Promise<string> {
  const where = namespace === null ? [] : ['-n', namespace];
  const [entry] = JSON.parse(await ip(...where, '-j', 'link', 'show', 'dev', link)) as Array<{ operstate: string }>;
  return entry?.operstate ?? 'missing';
}

/**
 * A new isolated host. `name` (at most 10 lowercase letters and digits) defaults to one made of this
 * process's pid and a count, unique among the hosts of running test processes; whatever a killed
 * run left under the same name is removed first.
 */
export async function createIsolatedHost(name?: string): Promise<IsolatedHost> {
  if (name === undefined) {
    namesGiven += 1;
    name = `${process.pid.toString(36)}n${namesGiven}`;
  }
  if (!namePattern.test(name)) throw new Error(`an isolated host's name is 1 to 10 lowercase letters and digits, not '${name}'`);
  if (process.getuid?.() !== 0) {
    throw new Error('an isolated network host needs root (ip netns and veth pairs need CAP_SYS_ADMIN and CAP_NET_ADMIN): run the tests as root, as CI does');
  }
  const names = namesOf(name);
  const { namespace, outsideLink, insideLink } = names;
  await removeHost(names, null);
  const subnet = await freeSubnet();
  const outsideAddress = dotted(subnet + 1);
  const insideAddress = dotted(subnet + 2);
  try {
    await ip('netns', 'add', namespace);
    await ip('link', 'add', outsideLink, 'type', 'veth', 'peer', 'name', insideLink, 'netns', namespace);
    await ip('address', 'add', `${outsideAddress}/30`, 'dev', outsideLink);
    await ip('link', 'set', 'dev', outsideLink, 'up');
    await ip('-n', namespace, 'address', 'add', `${insideAddress}/30`, 'dev', insideLink);
    await ip('-n', namespace, 'link', 'set', 'dev', insideLink, 'up');
    await ip('-n', namespace, 'link', 'set', 'dev', 'lo', 'up');
    // Inside, the outside address is known for good: during a cut no ARP query goes unanswered,
    // which would fail new connections with EHOSTUNREACH after a few seconds instead of leaving
    // them waiting. (Inside, the link's routes stay while it has no carrier.)
    const [outside] = JSON.parse(await ip('-j', 'link', 'show', 'dev', outsideLink)) as Array<{ address?: string }>;
    if (!outside?.address) throw new Error(`ip shows no hardware address for ${outsideLink}`);
    await ip('-n', namespace, 'neigh', 'replace', outsideAddress, 'lladdr', outside.address, 'dev', insideLink, 'nud', 'permanent');
    await ip('route', 'add', 'unreachable', `${dotted(subnet)}/30`, 'metric', fallbackMetric);
  } catch (error) {
    await removeHost(names, subnet).catch(() => undefined);
    throw error;
  }

  const running = new Map<ChildProcessWithoutNullStreams, Promise<void>>();
  const forwarders = new Map<string, Promise<TcpForwarder>>();
  let destroyed = false;

  const forwarderTo = (host: string, port: number): Promise<TcpForwarder> => {
    const key = `${host}:${port}`;
    let forwarder = forwarders.get(key);
    if (!forwarder) {
      forwarder = startTcpForwarder(outsideAddress, { host, port });
      forwarders.set(key, forwarder);
    }
    return forwarder;
  };

  return {
    name,
    namespace,
    outsideLink,
    insideLink,
    outsideAddress,
    insideAddress,

    async urlInside(url) {
      const rewritten = new URL(url);
      const port = rewritten.port !== '' ? Number(rewritten.port) : /^postgres(ql)?:$/.test(rewritten.protocol) ? 5432 : null;
      if (port === null) throw new Error(`a URL for inside an isolated host needs a port (protocol ${rewritten.protocol})`);
      const forwarder = await forwarderTo(rewritten.hostname.replace(/^\[(.*)\]$/, '$1'), port);
      rewritten.hostname = outsideAddress;
      rewritten.port = String(forwarder.port);
      return rewritten.toString();
    },

    spawnInside(command, args, options = {}) {
      if (destroyed) throw new Error(`the isolated host ${name} is destroyed`);
      const child = spawn('ip', ['netns', 'exec', namespace, command, ...args], { ...options, stdio: 'pipe' });
      // 'exit', not 'close': a process it started could hold its output open after it ended.
      const ended = new Promise<void>((done) => {
        child.once('exit', () => done());
        child.once('error', () => done());
      });
      running.set(child, ended);
      void ended.then(() => running.delete(child));
      return child;
    },

    async cut() {
      // This end down: this machine drops the link's routes (the fallback route keeps packets
      // for inside here), and the end inside loses its carrier, so what is sent there is dropped.
      await ip('link', 'set', 'dev', outsideLink, 'down');
    },

    async restore() {
      await ip('link', 'set', 'dev', outsideLink, 'up');
      // Each end passes packets once the kernel has marked it operational, a moment later.
      let states: string[] = [];
      await until(
        async () => (states = [await operstate(null, outsideLink), await operstate(namespace, insideLink)]).every((state) => state === 'UP'),
        10_000,
        () => `the link of the isolated host ${name} is still not up since it was brought up: ${states.join(', ')}`,
      );
    },

    async destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const child of running.keys()) child.kill('SIGKILL');
      await Promise.all(running.values());
      const started = await Promise.allSettled(forwarders.values());
      await Promise.all(started.map((forwarder) => (forwarder.status === 'fulfilled' ? forwarder.value.close() : undefined)));
      await removeHost(names, subnet);
    },
  };
}
