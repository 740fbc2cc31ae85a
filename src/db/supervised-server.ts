import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, portIsFree } from '../net.js';
import type { Logger } from '../logger.js';
import type { PgBinaries } from './pg-binaries.js';
import { readLockFile } from './postmaster.js';

export interface ServerSetup {
  binaries: PgBinaries;
  clusterDir: string;
  /** DATA_DIR: the server's log and its remembered port live there. */
  dataDir: string;
  user: string;
  password: string;
  /** The `postgres` user's ids, when this process runs as root. */
  runAs: { uid: number; gid: number } | null;
  /**
   * A session of its own, so that a Ctrl-C in the terminal reaches only this process, which stops
   * the server itself after its own shutdown (the service, the worker). Otherwise the server shares
   * this process's group, and a Ctrl-C of a process that does not handle signals (the tests, the
   * CLI) stops it too.
   */
  ownSession: boolean;
}

const serverFlags = [
  '-c', 'listen_addresses=127.0.0.1',
  '-c', 'unix_socket_directories=',
  // Messages in English whatever the locale: a failed start is explained from them.
  '-c', 'lc_messages=C',
  '-c', 'shared_buffers=256MB',
  '-c', 'max_connections=200',
  // Appends lock each stream of a batch (advisory locks): room for large batches.
  '-c', 'max_locks_per_transaction=256',
  // Fewer checkpoints under sustained ingest; commits stay synchronous.
  '-c', 'max_wal_size=4GB',
];

/** The log is kept across restarts, and set aside as postgresql.log.1 once it passes this size. */
const logLimitBytes = 10 * 1024 * 1024;
const restartDelaysMs = [100, 250, 500, 1_000, 2_000, 5_000];

/** DATA_DIR/embedded-server.json: the port to take again at the next start, and the process that owns the server. */
export interface ServerRecord {
  port: number;
  ownerPid: number;
}

export const recordFile = (dataDir: string): string => join(dataDir, 'embedded-server.json');

export async function readRecord(dataDir: string): Promise<ServerRecord | null> {
  return readFile(recordFile(dataDir), 'utf8').then(
    (text) => JSON.parse(text) as ServerRecord,
    () => null,
  );
}

/** The connection string of an embedded server on a loopback port. */
export function serverUrl({ user, password }: { user: string; password: string }, port: number): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

/**
 * A postmaster started and watched by this process. When it exits unasked (killed, crashed), it is started again on the same port (crash recovery
 * replays its WAL); the pools reconnect by themselves.
 */
export class SupervisedServer {
  private child: ChildProcess | null = null;
  private stopping = false;
  private readonly logFile: string;
  private readonly killOnExit = (): void => {
    // This process ends without its orderly stop: the server shuts down fast by itself.
    if (this.child?.exitCode === null) this.child.kill('SIGINT');
  };

  private constructor(
    private readonly setup: ServerSetup,
    private port: number,
    private readonly log: Logger,
  ) {
    this.logFile = join(setup.dataDir, 'postgresql.log');
  }

  /** Starts a server on the remembered port when it is free, on a free one otherwise. */
  static async start(setup: ServerSetup, log: Logger): Promise<SupervisedServer> {
    const remembered = (await readRecord(setup.dataDir))?.port;
    const port = remembered && (await portIsFree(remembered)) ? remembered : await freePort();
    const server = new SupervisedServer(setup, port, log);
    const size = await stat(server.logFile).then((s) => s.size, () => 0);
    if (size > logLimitBytes) await rename(server.logFile, `${server.logFile}.1`);
    await server.launch();
    process.on('exit', server.killOnExit);
    log.info({ port: server.port, dataDir: setup.dataDir }, 'embedded PostgreSQL started');
    return server;
  }

  get url(): string {
    return serverUrl(this.setup, this.port);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the postmaster and waits until it accepts connections; another port if this one is taken. */
  private async launch(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const problem = await this.spawnAndWait();
      if (!problem) break;
      if (!/could not bind|address already in use/i.test(problem) || attempt >= 3) {
        throw new Error(`embedded PostgreSQL did not start (data in ${this.setup.clusterDir}, log in ${this.logFile}): ${problem}`);
      }
      const taken = this.port;
      this.port = await freePort();
      this.log.warn({ taken, port: this.port }, 'the embedded PostgreSQL port is taken: another one is used');
    }
    const record: ServerRecord = { port: this.port, ownerPid: process.pid };
    await writeFile(recordFile(this.setup.dataDir), JSON.stringify(record));
  }

  /** null once ready; otherwise why it exited (the last lines of its log). */
  private async spawnAndWait(): Promise<string | null> {
    const { binaries, clusterDir, runAs } = this.setup;
    const logFd = openSync(this.logFile, 'a');
    let logStart: number;
    try {
      logStart = (await stat(this.logFile)).size;
      if (this.stopping) return 'stopped before it started';
      this.child = spawn(binaries.postgres, ['-D', clusterDir, '-p', String(this.port), ...serverFlags], {
        detached: this.setup.ownSession,
        cwd: '/',
        stdio: ['ignore', logFd, logFd],
        ...(runAs ?? {}),
      });
    } finally {
      closeSync(logFd);
    }
    const child = this.child;
    // The server must not keep this process alive, nor be left behind: see killOnExit.
    child.unref();
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.once('error', () => undefined);
    while (child.exitCode === null && child.signalCode === null) {
      const lock = readLockFile(clusterDir);
      if (lock && lock.pid === child.pid && lock.status === 'ready') {
        child.once('exit', (code, signal) => this.exitedUnasked(child, code, signal));
        return null;
      }
      await Promise.race([sleep(25), exited]);
    }
    const output = await readFile(this.logFile, 'utf8').then((text) => text.slice(logStart), () => '');
    return output.trim().split('\n').slice(-5).join(' | ') || `it exited (${child.exitCode ?? child.signalCode})`;
  }

  private exitedUnasked(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || child !== this.child) return;
    this.log.error({ code, signal, pid: child.pid }, 'embedded PostgreSQL exited unexpectedly: starting it again');
    void this.restart(Date.now());
  }

  private async restart(downSince: number): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt += 1) {
      await sleep(restartDelaysMs[Math.min(attempt, restartDelaysMs.length - 1)]);
      if (this.stopping) return;
      try {
        await this.launch();
        this.log.info({ port: this.port, downMs: Date.now() - downSince }, 'embedded PostgreSQL running again');
        return;
      } catch (error) {
        // The old server's processes may hold its shared memory for a moment: try again.
        if (attempt === 2) this.log.warn({ err: error }, 'embedded PostgreSQL does not start again yet; still trying');
      }
    }
  }

  /** A fast shutdown: sessions are ended, committed work is checkpointed. */
  async stop(): Promise<void> {
    this.stopping = true;
    process.removeListener('exit', this.killOnExit);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    child.kill('SIGINT');
    const patience = new AbortController();
    const timedOut = await Promise.race([
      exited.then(() => false),
      sleep(60_000, true, { signal: patience.signal }).catch(() => false),
    ]);
    patience.abort();
    if (timedOut) {
      child.kill('SIGQUIT');
      await exited;
    }
  }
}
