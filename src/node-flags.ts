import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { projectRoot } from './paths.js';

/**
 * The Node.js flags `npm start` and `npm run worker` run the service with (package.json's scripts are
 * their one source): a small young generation and a heap limit, so that garbage is collected before
 * it is hundreds of megabytes of resident memory (docs/performance.md, Memory). Whoever starts the
 * service's processes otherwise (the bench, tests) starts them with the same flags.
 */
export function nodeFlagsOf(script: 'start' | 'worker'): string[] {
  const manifest = JSON.parse(readFileSync(resolve(projectRoot, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const command = manifest.scripts?.[script] ?? '';
  return command.split(/\s+/).filter((word) => word.startsWith('--'));
}
