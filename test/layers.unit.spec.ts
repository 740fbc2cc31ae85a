import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'chai';
import { pathToFileURL } from 'node:url';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { projectRoot } from '../src/paths.js';

/** The rules `npm run lint` checks the project with. */
const layers = ((await import(pathToFileURL(join(projectRoot, '.dependency-cruiser.mjs')).href)) as { default: IConfiguration }).default;

/** The rule violations `npm run lint` reports for a tree of files (path: source), as `rule: from -> to`. */
async function violationsOf(files: Record<string, string>): Promise<string[]> {
  const root = mkdtempSync(join(tmpdir(), 'layers-'));
  try {
    for (const [path, source] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), source);
    }
    // The project's own tsconfig.json is not the fixture's.
    const options = { ...layers.options };
    delete options.tsConfig;
    const { output } = await cruise(['src', 'projections'].filter((top) => existsSync(join(root, top))), { ...options, ruleSet: { forbidden: layers.forbidden ?? [] }, validate: true, baseDir: root });
    return (output as ICruiseResult).summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('the layer rules of npm run lint (unit)', () => {
  it('let each layer import the ones below it', async () => {
    expect(
      await violationsOf({
        'src/main.ts': "import { app } from './http/app.js';\nexport const main = app;\n",
        'src/http/app.ts': "import { ingest } from '../ingest/users.js';\nexport const app = ingest;\n",
        'src/ingest/users.ts': "import { store } from '../eventstore/port.js';\nexport const ingest = store;\n",
        'src/eventstore/port.ts': "import type { Pool } from '../db/pool.js';\nexport const store = (pool: Pool) => pool;\n",
        'src/db/pool.ts': "import { settings } from '../config.js';\nexport type Pool = typeof settings;\n",
        'src/config.ts': 'export const settings = 1;\n',
        'projections/leads/fold.ts': "import { store } from '../../src/eventstore/port.js';\nexport const fold = store;\n",
      }),
    ).to.deep.equal([]);
  });

  it('refuse an import up the layers, also a type-only one', async () => {
    expect(
      await violationsOf({
        'src/config.ts': "import type { App } from './http/app.js';\nexport type Settings = App;\n",
        'src/http/app.ts': 'export type App = number;\n',
        'src/eventstore/port.ts': "import { fold } from '../../projections/leads/fold.js';\nexport const store = fold;\n",
        'projections/leads/fold.ts': 'export const fold = 1;\n',
        'src/ingest/users.ts': "import { main } from '../main.js';\nexport const ingest = main;\n",
        'src/main.ts': 'export const main = 1;\n',
      }),
    ).to.deep.equal([
      'domain-not-up: src/ingest/users.ts -> src/main.ts',
      'eventstore-not-up: src/eventstore/port.ts -> projections/leads/fold.ts',
      'ground-not-up: src/config.ts -> src/http/app.ts',
    ]);
  });

  it('refuse an import circle, within a layer too', async () => {
    expect(
      await violationsOf({
        'src/accounts/accounts.ts': "import { token } from './tokens.js';\nexport const account = () => token;\n",
        'src/accounts/tokens.ts': "import type { account } from './accounts.js';\nexport const token = 1 as unknown as typeof account;\n",
      }),
      // The circle closes through a type-only import.
    ).to.deep.equal(['no-circular: src/accounts/accounts.ts -> src/accounts/tokens.ts']);
  });
});
