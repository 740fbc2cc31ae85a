import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * Segment's real browser library, @segment/analytics-next (a devDependency), as a page of a
 * website gets it from its own bundler: one ES module exporting AnalyticsBrowser, every chunk the
 * package loads with import() (legacy destinations, schema filter, remote middleware...) inlined,
 * so that the page loads nothing from Segment's CDN. The package's own UMD build is not used: its
 * standalone script loads its chunks from cdn.segment.com.
 *
 * Built with vite (as sdk/build-browser.js builds the project's SDK) once per version of the
 * package and of vite, into a file of the temporary directory that later runs reuse, and once per
 * process in memory.
 */

/** The entry module, made by a plugin: vite makes a lib entry a path under its root, which is left unused. */
const entryName = 'analytics-next-entry.js';
const entryId = '\0analytics-next-entry';
const entrySource = "export { AnalyticsBrowser } from '@segment/analytics-next';\n";

const require = createRequire(join(projectRoot, 'package.json'));
const versionOf = (name: string): string => (JSON.parse(readFileSync(join(dirname(require.resolve(`${name}/package.json`)), 'package.json'), 'utf8')) as { version: string }).version;

/** The analytics-next version bundled (what its messages name in context.library.version). */
export const analyticsNextVersion = versionOf('@segment/analytics-next');

async function build(): Promise<string> {
  const { build: viteBuild } = await import('vite');
  const output = await viteBuild({
    configFile: false,
    root: projectRoot,
    logLevel: 'warn',
    // The package reads process.env only behind `typeof process`; a bundler of a site defines NODE_ENV.
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    plugins: [
      {
        name: 'analytics-next-entry',
        resolveId: (id: string) => (id === entryName || id.endsWith(`/${entryName}`) ? entryId : null),
        load: (id: string) => (id === entryId ? entrySource : null),
      },
    ],
    build: {
      write: false,
      target: 'es2020',
      minify: false,
      sourcemap: false,
      copyPublicDir: false,
      lib: { entry: entryName, formats: ['es'], fileName: () => 'analytics-next.mjs' },
      rolldownOptions: { output: { codeSplitting: false } },
    },
  });
  const outputs = Array.isArray(output) ? output : [output];
  const chunks = outputs.flatMap((o) => ('output' in o ? o.output : [])).filter((file) => file.type === 'chunk');
  if (chunks.length !== 1 || !chunks[0]) throw new Error(`analytics-next bundle: ${chunks.length} chunks (${chunks.map((c) => c.fileName).join(', ')}), not one`);
  const code = chunks[0].code;
  if (/\bimport\s*\(/.test(code)) throw new Error('analytics-next bundle: a dynamic import() is left, which would load a chunk from elsewhere');
  return code;
}

/** The bundle's file of the temporary directory, for this version of the package, of vite and of this build. */
function cachePath(): string {
  const user = process.getuid?.() ?? 'user';
  return join(tmpdir(), `tracking-analytics-next-${analyticsNextVersion}-vite-${versionOf('vite')}-v1-${user}.mjs`);
}

let bundled: Promise<string> | undefined;

/** The bundle's code (an ES module exporting AnalyticsBrowser), built at the first call of the run, or of the first run. */
export function analyticsNextBundle(): Promise<string> {
  bundled ??= (async () => {
    const path = cachePath();
    if (existsSync(path)) return readFileSync(path, 'utf8');
    const code = await build();
    // Written beside and renamed: a run starting meanwhile never reads half a file.
    const partial = mkdtempSync(`${path}.partial-`);
    try {
      writeFileSync(join(partial, 'bundle.mjs'), code);
      renameSync(join(partial, 'bundle.mjs'), path);
    } finally {
      rmSync(partial, { recursive: true, force: true });
    }
    return code;
  })();
  return bundled;
}
