import { chmod, mkdir, realpath, stat } from 'node:fs/promises';
import { dirname, parse } from 'node:path';

/**
 * As root, PostgreSQL runs as the `postgres` user. What that user cannot reach elsewhere (copies of
 * the binaries, clusters) goes here. Others may enter it but not list it.
 */
export const rootPlace = '/var/lib/tracking-ingestion';

/** Whether a user who is neither owner nor in the group can enter every directory above `path`. */
export async function othersCanEnterParentsOf(path: string): Promise<boolean> {
  const real = await realpath(path);
  const { root } = parse(real);
  for (let current = dirname(real); current !== root; current = dirname(current)) {
    if (((await stat(current)).mode & 0o001) === 0) return false;
  }
  return true;
}

/** Makes `dir` (rootPlace or a cache like it) when missing: others may enter it (mode 0711) but not list it. */
export async function makeRootPlace(dir = rootPlace): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o711);
}
