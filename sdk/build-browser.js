/* global console, process */
// Builds the browser SDK (sdk/src/browser, docs/browser.md) into the two files the service serves
// under /sdk/: dist/browser/tracking.mjs (an ES module exporting createTracker and version) and
// dist/browser/tracking.js (a script that defines window.Tracking), both minified. First a
// type-check with lib DOM (tsconfig.browser.json); last the size budget (budget.js), which fails
// the build past 8 KiB gzipped. `npm run build` at the root runs it after tsc. Skipped when both
// files are newer than every source, so that `npm start` stays quick; `--force` builds anyway.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkBudget } from './budget.js';

const sdk = dirname(fileURLToPath(import.meta.url));
const outDir = join(sdk, 'dist', 'browser');
const entry = join(sdk, 'src', 'browser', 'index.ts');
const files = { es: 'tracking.mjs', iife: 'tracking.js' };
const sources = ['src/browser', 'src/retry.ts', 'src/types.ts', 'tsconfig.browser.json', 'build-browser.js', 'budget.js'].map((path) => join(sdk, path));

/** The latest modification time of a file, or of any file under a folder; -Infinity when absent. */
function latestChange(path) {
  try {
    const stat = statSync(path);
    if (!stat.isDirectory()) return stat.mtimeMs;
    return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => latestChange(join(path, name))));
  } catch {
    return -Infinity;
  }
}

const builtAt = Math.min(...Object.values(files).map((name) => latestChange(join(outDir, name))));
if (!process.argv.includes('--force') && builtAt > Math.max(...sources.map(latestChange))) {
  console.log('browser SDK: dist/browser is up to date');
} else {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const check = spawnSync(process.execPath, [tsc, '-p', join(sdk, 'tsconfig.browser.json')], { stdio: 'inherit' });
  if (check.status !== 0) process.exit(check.status ?? 1);
  const { build } = await import('vite');
  await build({
    configFile: false,
    root: sdk,
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: false, // tsc's output of the SDK is there too
      target: 'es2020',
      minify: true,
      sourcemap: false,
      copyPublicDir: false,
      lib: { entry, name: 'Tracking', formats: ['es', 'iife'], fileName: (format) => files[format] },
      // Vite keeps the whitespace of an ES library (for the consumer's bundler); this one is served as it is.
      rolldownOptions: { output: { minify: true } },
    },
  });
}

// Checked even when up to date: a build over the budget never passes.
let over = false;
for (const name of Object.values(files)) {
  const result = checkBudget(`dist/browser/${name}`, readFileSync(join(outDir, name)));
  console.log(`browser SDK: ${result.message}`);
  over ||= !result.ok;
}
if (over) {
  console.error('browser SDK: a build is over its size budget (sdk/budget.js): make it smaller rather than raise the budget');
  process.exit(1);
}
