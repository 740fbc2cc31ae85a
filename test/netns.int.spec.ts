import assert from 'node:assert/strict';
import { execFile, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { projectRoot } from '../src/paths.js';
import { freshDatabase, type TestDatabase } from './support/database.js';
import { until, within } from './support/eventually.js';
import { createIsolatedHost, type IsolatedHost } from './support/netns.js';

const run = promisify(execFile);
const selectOnRequest = join(projectRoot, 'dist', 'test', 'support', 'select-on-request.js');
const netnsModule = join(projectRoot, 'dist', 'test', 'support', 'netns.js');

/** Reads a child's output line by line: each call resolves with the next line, or null once the output has ended. */
function linesOf(child: ChildProcessWithoutNullStreams): () => Promise<string | null> {
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return async () => {
    const { value, done } = await lines.next();
    return done ? null : value;
  };
}

/**
 * Starts a process inside `host` that prints `connecting`, opens a TCP connection to
 * `address`:`port` and prints `connected` or the error's code; returns its lines.
 */
function connectionFrom(host: IsolatedHost, address: string, port: number): () => Promise<string | null> {
  const script = `console.log('connecting');
    require('node:net').connect(Number(process.argv[2]), process.argv[1])
      .on('connect', () => { console.log('connected'); process.exit(0); })
      .on('error', (error) => { console.log(error.code); process.exit(0); });`;
  return linesOf(host.spawnInside(process.execPath, ['-e', script, address, String(port)]));
}

/** What a process inside `host` gets when it opens a TCP connection to `address`:`port`: 'connected' or the error's code. */
async function connectFrom(host: IsolatedHost, address: string, port: number): Promise<string | null> {
  const nextLine = connectionFrom(host, address, port);
  assert.equal(await within(nextLine(), 10_000, 'the start of a process inside'), 'connecting');
  return within(nextLine(), 10_000, `a connection to ${address}:${port} from inside`);
}

/** What this process gets when it opens a TCP connection to `address`:`port`: 'connected' or the error's code. */
function connectHere(address: string, port: number): Promise<string> {
  return new Promise((settled) => {
    const socket = connect(port, address)
      .on('connect', () => {
        socket.destroy();
        settled('connected');
      })
      .on('error', (error: NodeJS.ErrnoException) => settled(error.code ?? error.message));
  });
}

/** The routes of this machine, every table, as `ip` prints them. */
async function routes(): Promise<string> {
  return (await run('ip', ['route', 'show', 'table', 'all'])).stdout;
}

function subnetOf(host: IsolatedHost): string {
  const octets = host.outsideAddress.split('.').map(Number);
  return `${octets.slice(0, 3).join('.')}.${(octets[3] ?? 0) - 1}/30`;
}

/** Whether `pid` has ended (a zombie, waiting for whoever adopted it to collect it, has ended). */
async function ended(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat === null || /\) Z /.test(stat);
}

describe('an isolated network host for processes under test (test/support/netns.ts)', function () {
  let database: TestDatabase;
  let host: IsolatedHost | null = null;

  before(async () => {
    database = await freshDatabase();
  });

  afterEach(async () => {
    await host?.destroy();
    host = null;
  });

  after(async () => {
    await database.drop();
  });

  it('a process inside queries PostgreSQL through the forwarder; after cut() neither its query nor a new connection completes or fails, and after restore() both do, the query on the same connection', async () => {
    host = await createIsolatedHost();
    const child = host.spawnInside(process.execPath, [selectOnRequest], { env: { ...process.env, DATABASE_URL: await host.urlInside(database.url) } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const nextLine = linesOf(child);
    const first = await within(nextLine(), 30_000, 'the connection from inside');
    const [word, pid, backend] = first?.split(' ') ?? [];
    assert.equal(word, 'connected', `the child printed ${first}; stderr: ${stderr}`);
    // `ip netns exec` sets the namespace and execs the command: the child's pid is the process's own.
    assert.equal(Number(pid), child.pid);
    for (const number of [1, 2, 3]) {
      child.stdin.write(`${number}\n`);
      assert.equal(await within(nextLine(), 10_000, `query ${number}`), `answered ${number} ${backend}`);
    }

    const forwarded = new URL(await host.urlInside(database.url));
    await host.cut();
    const newConnection = connectionFrom(host, forwarded.hostname, Number(forwarded.port));
    assert.equal(await within(newConnection(), 10_000, 'the start of a process inside'), 'connecting');
    const connection = newConnection();
    child.stdin.write('4\n');
    const reply = nextLine();
    // Both sent after the cut, so their packets are dropped: no answer and no error, not even after
    // 4 s, when an ARP query left unanswered would have failed the new connection (EHOSTUNREACH at 3 s).
    assert.equal(await Promise.race([reply, sleep(4_000, 'nothing within 4 s')]), 'nothing within 4 s');
    assert.equal(await Promise.race([connection, sleep(0, 'nothing within 4 s')]), 'nothing within 4 s');
    assert.equal(child.exitCode, null);
    // What this machine sends there meanwhile stays here, refused at once, rather than leaving by
    // its default route.
    assert.equal(await within(connectHere(host.insideAddress, 9), 2_000, 'a connection from here'), 'EHOSTUNREACH');

    await host.restore();
    // TCP retransmits the query, with a back-off of a few seconds by now; the connection has not
    // timed out (that takes minutes), so it goes on: the same connection, the same backend.
    assert.equal(await within(reply, 30_000, 'the answer after restore()'), `answered 4 ${backend}`);
    assert.equal(await within(connection, 30_000, 'the new connection after restore()'), 'connected');
    child.stdin.write('5\n');
    assert.equal(await within(nextLine(), 10_000, 'query 5'), `answered 5 ${backend}`);
  });

  it("a process inside reaches this machine's PostgreSQL only through the forwarder", async () => {
    host = await createIsolatedHost();
    const server = new URL(database.url);
    const forwarded = new URL(await host.urlInside(database.url));
    assert.equal(forwarded.hostname, host.outsideAddress);
    // Inside, 127.0.0.1 is the namespace's own loopback, where nothing listens.
    assert.equal(await connectFrom(host, server.hostname, Number(server.port)), 'ECONNREFUSED');
    assert.equal(await connectFrom(host, forwarded.hostname, Number(forwarded.port)), 'connected');
  });

  it('destroy() kills the processes inside and leaves no namespace, veth pair or route behind', async () => {
    const isolated = await createIsolatedHost();
    host = isolated;
    await isolated.urlInside(database.url);
    const spawned = isolated.spawnInside('sh', ['-c', 'sleep 600 & echo $!; wait']);
    const grandchild = Number(await within(linesOf(spawned)(), 10_000, 'the pid of the process the shell started'));
    assert.equal(await ended(grandchild), false);

    await isolated.destroy();
    assert.equal(spawned.signalCode, 'SIGKILL');
    await until(() => ended(grandchild), 10_000, () => `the process ${grandchild} started inside still runs after destroy()`);
    assert.doesNotMatch((await run('ip', ['netns', 'list'])).stdout, new RegExp(`^${isolated.namespace}\\b`, 'm'));
    const links = (await run('ip', ['-o', 'link', 'show'])).stdout;
    assert.ok(!links.includes(isolated.outsideLink) && !links.includes(isolated.insideLink), links);
    assert.ok(!(await routes()).includes(subnetOf(isolated)));
  });

  it('clears what a killed run left under the same name (processes inside, a cut link) and makes the host again', async () => {
    const name = `${process.pid.toString(36)}left`;
    // As a test run killed during a cut leaves it: no destroy() is called for it.
    const abandoned = await createIsolatedHost(name);
    const leftover = abandoned.spawnInside('sh', ['-c', 'echo inside; exec sleep 600']);
    assert.equal(await within(linesOf(leftover)(), 10_000, 'the leftover process'), 'inside');
    await abandoned.cut();
    const leftoverExit = once(leftover, 'exit');

    host = await createIsolatedHost(name);
    await within(leftoverExit, 10_000, 'the end of the leftover process');
    assert.equal(leftover.signalCode, 'SIGKILL');
    if (host.outsideAddress !== abandoned.outsideAddress) assert.ok(!(await routes()).includes(subnetOf(abandoned)));
    const forwarded = new URL(await host.urlInside(database.url));
    assert.equal(await connectFrom(host, forwarded.hostname, Number(forwarded.port)), 'connected');
  });

  it('fails saying why when not run as root, or when `ip` is missing', async () => {
    // A child that loads the module as root (the checkout may be out of reach of other users), then
    // gives up root, as a test run by another user would be.
    const attempt = (dropRoot: boolean, env: NodeJS.ProcessEnv) =>
      run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const { createIsolatedHost } = await import(process.argv[1]);
           if (process.argv[2] === 'drop') { process.setgid(65534); process.setuid(65534); }
           await createIsolatedHost().then((host) => host.destroy().then(() => console.log('made')), (error) => console.log(error.message));`,
          netnsModule,
          dropRoot ? 'drop' : 'keep',
        ],
        { env },
      ).then(({ stdout }) => stdout.trim());
    assert.match(await attempt(true, process.env), /^an isolated network host needs root \(.*\): run the tests as root, as CI does$/);
    assert.equal(await attempt(false, { ...process.env, PATH: '/nonexistent' }), 'an isolated network host needs the `ip` command (iproute2), which is not installed');
  });
});
