import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runningEmbeddedServer } from '../src/db/embedded.js';
import { withDatabase } from '../src/db/pool.js';
import { isAlive, readLockFile } from '../src/db/postmaster.js';
import { storedTrackIds } from './support/database.js';
import { eventually, until } from './support/eventually.js';
import { post, ServiceProcess } from './support/service-process.js';

const adminToken = 'supervision-test-admin';

/** A process's children, with their command lines (a PostgreSQL server's: "postgres: checkpointer", ...). */
function childrenOf(parent: number): Array<{ pid: number; args: string }> {
  return execFileSync('ps', ['-A', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .flatMap((line) => {
      const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
      return match && Number(match[2]) === parent ? [{ pid: Number(match[1]), args: match[3] ?? '' }] : [];
    });
}

describe('the embedded PostgreSQL, supervised (e2e)', function () {
  this.timeout(120_000);
  let dataDir: string;
  const running: ServiceProcess[] = [];

  // One DATA_DIR for all: the cluster is made once; every test leaves the service stopped.
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tracking-supervision-'));
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((service) => service.kill()));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  const postmaster = () => {
    const lock = readLockFile(join(dataDir, 'pg'));
    if (!lock) throw new Error('no postmaster.pid');
    return lock;
  };

  async function start(script: 'main' | 'worker-main', env: Record<string, string> = {}): Promise<ServiceProcess> {
    const service = ServiceProcess.start(script, { DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, ...env });
    running.push(service);
    if (script === 'main') await service.waitForHealth();
    else await service.waitForLine('projection worker started');
    return service;
  }

  async function account(service: ServiceProcess): Promise<{ licenseCode: string; accessToken: string }> {
    const reply = await post(service.base, '/admin/v1/accounts', { name: 'supervised' }, adminToken);
    expect(reply.status).to.equal(201);
    return reply.body as { licenseCode: string; accessToken: string };
  }

  async function acknowledged(service: ServiceProcess, count: number): Promise<string[]> {
    const { licenseCode, accessToken } = await account(service);
    const trackIds: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const reply = await post(service.base, `/v1/accounts/${licenseCode}/events`, { userId: `u-${i}`, eventName: 'Viewed' }, accessToken);
      expect(reply.status).to.equal(200);
      trackIds.push((reply.body.response as { trackID: string }).trackID);
    }
    return trackIds;
  }

  /**
   * One Ctrl-C under `npm start`: the terminal signals its whole foreground process group, and npm
   * passes on the signal it got a moment later (here: once the first was handled, so that the two
   * are not merged into one pending signal).
   */
  async function ctrlC(service: ServiceProcess): Promise<void> {
    process.kill(-service.pid, 'SIGINT');
    await service.waitForLine('signal received');
    // A process with nothing to drain (a worker) may have stopped already: then there is none to pass it to.
    if (service.running) {
      try {
        process.kill(service.pid, 'SIGINT');
      } catch (error) {
        if ((error as { code?: string }).code !== 'ESRCH') throw error;
      }
    }
  }

  /** The status of GET /healthz once it no longer satisfies `holds` (0: no answer), within `ms`. */
  async function healthWhile(service: ServiceProcess, holds: (status: number) => boolean, ms: number): Promise<number> {
    let status = 0;
    return eventually(
      async () => {
        status = await fetch(`${service.base}/healthz`).then((r) => r.status, () => 0);
        return !holds(status) && status;
      },
      ms,
      () => `/healthz still answers ${status}`,
    );
  }

  /** The trackIDs stored in the running service's embedded database. */
  async function storedTrackIdsOfService(): Promise<Set<string>> {
    const server = await runningEmbeddedServer(dataDir);
    if (!server) throw new Error('no embedded server running');
    return storedTrackIds(withDatabase(server(), 'tracking'));
  }

  it('after kill -9 of the service, the next start stops the server it left running and comes up with every acknowledged item', async () => {
    const first = await start('main');
    const trackIds = await acknowledged(first, 20);
    const leftOver = postmaster().pid;
    first.child.kill('SIGKILL');
    await first.exited;
    expect(isAlive(leftOver), 'the server outlives the killed service').to.equal(true);

    const second = await start('main');
    expect(second.logged('an embedded PostgreSQL left running by a process that ended is stopped first')).to.equal(true);
    expect(isAlive(leftOver)).to.equal(false);
    const stored = await storedTrackIdsOfService();
    for (const trackId of trackIds) expect(stored).to.include(trackId);
  });

  it('when the server is killed under the running service, logs it as an error, answers 503 on /healthz while it is down, starts it again and serves again, without losing what it acknowledged', async () => {
    const service = await start('main');
    const before = await acknowledged(service, 10);
    const { pid, port } = postmaster();
    // A server process held stopped keeps the killed server's shared memory in use, and PostgreSQL
    // refuses to start while it is: the service stays without a server until it is let go, as
    // during a long crash recovery, instead of the 100 ms before the first restart.
    const checkpointer = childrenOf(pid).find((child) => child.args.includes('checkpointer'));
    if (!checkpointer) throw new Error(`no checkpointer among the server's processes: ${JSON.stringify(childrenOf(pid))}`);
    process.kill(checkpointer.pid, 'SIGSTOP');
    try {
      process.kill(pid, 'SIGKILL');
      await service.waitForLine('embedded PostgreSQL exited unexpectedly: starting it again');
      expect(service.lines.find((line) => line.msg.startsWith('embedded PostgreSQL exited'))).to.include({ level: 50, signal: 'SIGKILL' });
      expect(await healthWhile(service, (status) => status === 200, 10_000), '/healthz without a server').to.equal(503);
      expect(service.logged('embedded PostgreSQL running again'), 'started again while the old one held its memory').to.equal(false);
    } finally {
      process.kill(checkpointer.pid, 'SIGCONT');
    }
    await service.waitForLine('embedded PostgreSQL running again');
    await service.waitForHealth(30_000);
    expect(postmaster().port, 'same port').to.equal(port);
    const after = await acknowledged(service, 5);
    const stored = await storedTrackIdsOfService();
    for (const trackId of [...before, ...after]) expect(stored).to.include(trackId);
    service.child.kill('SIGTERM');
    expect(await service.exited).to.equal(0);
  });

  it('one Ctrl-C under load (SIGINT to the process group, and once more from npm) drains: no 5xx, "stopped", exit 0', async () => {
    const service = await start('main');
    const { licenseCode, accessToken } = await account(service);
    const statuses: number[] = [];
    let clientsEnded = 0;
    const clients = Array.from({ length: 16 }, async (_, c) => {
      for (let i = 0; ; i += 1) {
        try {
          statuses.push((await post(service.base, `/v1/accounts/${licenseCode}/events`, { userId: `u${c}`, eventName: `e${i}` }, accessToken)).status);
        } catch {
          clientsEnded += 1;
          return; // the port is closed: the service has stopped taking requests
        }
      }
    });
    // Under load: 200 answers first (a deadline, should the clients fail before the signal).
    await until(
      () => {
        if (statuses.length < 200 && clientsEnded === clients.length) throw new Error(`every client failed before the Ctrl-C, after ${statuses.length} answers: ${service.stderr}`);
        return statuses.length >= 200;
      },
      30_000,
      () => `only ${statuses.length} of 200 requests answered`,
    );
    await ctrlC(service);
    await Promise.all(clients);
    expect(await service.exited).to.equal(0);
    expect(statuses.filter((status) => status >= 500)).to.deep.equal([]);
    expect(service.logged('stopped')).to.equal(true);
  });

  it('one Ctrl-C stops a worker beside the service: "stopped", exit 0', async () => {
    await start('main', { PROJECTIONS: 'off' });
    const worker = await start('worker-main');
    await ctrlC(worker);
    expect(await worker.exited).to.equal(0);
    expect(worker.logged('stopped')).to.equal(true);
  });

  it('a worker beside the service finds the server again after the service restarts it on another port, and applies new events', async () => {
    const env = { PROJECTIONS: 'off' };
    const first = await start('main', env);
    const worker = await start('worker-main');
    const { licenseCode, accessToken } = await account(first);
    const leadVisible = async (service: ServiceProcess, userId: string): Promise<void> => {
      const reply = await post(service.base, `/v1/accounts/${licenseCode}/users`, { userId, attributes: {} }, accessToken);
      expect(reply.status).to.equal(200);
      let status = 0;
      await until(
        async () => (status = (await fetch(`${service.base}/admin/v1/accounts/${licenseCode}/leads/${userId}`, { headers: { authorization: accessToken } })).status) === 200,
        30_000,
        () => `lead ${userId} not applied by the worker (still ${status})`,
      );
    };
    await leadVisible(first, 'before');
    const oldPort = postmaster().port;
    first.child.kill('SIGTERM');
    expect(await first.exited).to.equal(0);

    // Something else takes the old port meanwhile: the restarted server gets another one.
    const held = new Set<Socket>();
    const holder = createServer((socket) => held.add(socket));
    await new Promise<void>((done) => holder.listen(oldPort, '127.0.0.1', done));
    try {
      const second = await start('main', env);
      expect(postmaster().port).to.not.equal(oldPort);
      await leadVisible(second, 'after');
      expect(worker.logged('the embedded PostgreSQL on DATA_DIR found again')).to.equal(true);
    } finally {
      for (const socket of held) socket.destroy();
      holder.close();
    }
  });
});
