// Builds the dashboard into dashboard/dist (`npm run build` runs it after tsc): a type-check with
// dashboard/tsconfig.json, then vite build. Skipped when dashboard/dist is newer than every source,
// so that `npm start` stays quick when nothing changed; `--force` builds anyway.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const dashboard = dirname(fileURLToPath(import.meta.url));
const built = join(dashboard, 'dist', 'index.html');
const sources = [join(dashboard, 'src'), join(dashboard, 'index.html'), join(dashboard, 'vite.config.ts'), join(dashboard, 'tsconfig.json')];

/** The latest modification time of a file, or of any file under a folder. */
function latestChange(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => latestChange(join(path, name))));
}

function builtAt() {
  try {
    return statSync(built).mtimeMs;
  } catch {
    return -Infinity;
  }
}

if (!process.argv.includes('--force') && builtAt() > Math.max(...sources.map(latestChange))) {
  console.log('dashboard: dashboard/dist is up to date');
} else {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const check = spawnSync(process.execPath, [tsc, '-p', resolve(dashboard, 'tsconfig.json')], { stdio: 'inherit' });
  if (check.status !== 0) process.exit(check.status ?? 1);
  const { build } = await import('vite');
  await build({ configFile: join(dashboard, 'vite.config.ts') });
  console.log('dashboard: built into dashboard/dist');
}
