// Builds the dashboard into dashboard/dist (`npm run build` runs it after tsc and src/openapi/write.ts):
// the reply types of the API generated from the OpenAPI document (dist/openapi.json) into
// src/api-types.ts, a type-check with dashboard/tsconfig.json, then vite build. Skipped when
// dashboard/dist is newer than every source and than the document, so that `npm start` stays quick
// when nothing changed; `--force` builds anyway.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dashboard = dirname(fileURLToPath(import.meta.url));
const built = join(dashboard, 'dist', 'index.html');
const document = resolve(dashboard, '..', 'dist', 'openapi.json');
/** Generated, not committed (.gitignore): made anew whenever the document changes, so it cannot go stale. */
const apiTypes = join(dashboard, 'src', 'api-types.ts');
const sources = [join(dashboard, 'src'), join(dashboard, 'index.html'), join(dashboard, 'vite.config.ts'), join(dashboard, 'tsconfig.json'), document];

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

/** Writes src/api-types.ts from the document; left alone when it already holds the same. */
async function generateApiTypes() {
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  // A schema `{ type: 'object' }` (an event's data) is any JSON object: Record<string, unknown>, not Record<string, never>.
  const ast = await openapiTS(pathToFileURL(document), { emptyObjectsUnknown: true });
  const text = `${COMMENT_HEADER}// Made by dashboard/build.js from dist/openapi.json (src/openapi).\n\n${astToString(ast)}`;
  if (!existsSync(apiTypes) || readFileSync(apiTypes, 'utf8') !== text) writeFileSync(apiTypes, text);
}

if (!existsSync(document)) {
  console.error('dashboard: dist/openapi.json is missing: `npm run build:server` writes it (`npm run build` runs both)');
  process.exit(1);
}

if (!process.argv.includes('--force') && existsSync(apiTypes) && builtAt() > Math.max(...sources.map(latestChange))) {
  console.log('dashboard: dashboard/dist is up to date');
} else {
  await generateApiTypes();
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const check = spawnSync(process.execPath, [tsc, '-p', resolve(dashboard, 'tsconfig.json')], { stdio: 'inherit' });
  if (check.status !== 0) process.exit(check.status ?? 1);
  const { build } = await import('vite');
  await build({ configFile: join(dashboard, 'vite.config.ts') });
  console.log('dashboard: built into dashboard/dist');
}
