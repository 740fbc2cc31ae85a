import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runInNewContext } from 'node:vm';
import { expect } from 'chai';
import { version } from '@tracking-ingestion/sdk/browser/internals';
import { browserSdkDir, projectRoot } from '../../src/paths.js';

/** sdk/budget.js: the size check of sdk/build-browser.js. */
interface BudgetModule {
  budgetBytes: number;
  checkBudget(name: string, code: Uint8Array | string, budget?: number): { ok: boolean; bytes: number; gzipBytes: number; brotliBytes: number; message: string };
}

describe('browser SDK builds and their size budget (unit)', () => {
  let budget: BudgetModule;
  const builds = ['tracking.mjs', 'tracking.js'];

  before(async () => {
    budget = (await import(pathToFileURL(join(projectRoot, 'sdk', 'budget.js')).href)) as BudgetModule;
  });

  it('is 8 KiB gzipped, which each real build is within', async () => {
    expect(budget.budgetBytes).to.equal(8192);
    for (const name of builds) {
      const result = budget.checkBudget(name, await readFile(join(browserSdkDir, name)));
      expect(result.ok, result.message).to.equal(true);
      expect(result.gzipBytes).to.be.above(1_000).and.at.most(8192);
      expect(result.brotliBytes).to.be.above(0).and.below(result.gzipBytes);
      expect(result.message).to.match(new RegExp(`^${name.replace('.', '\\.')}: \\d+ bytes, \\d+ gzipped, \\d+ brotli \\(budget 8192 gzipped\\)$`));
    }
  });

  it('refuses a build grown past it, naming its size', async () => {
    const real = await readFile(join(browserSdkDir, 'tracking.js'));
    const grown = Buffer.concat([real, Buffer.from(`/*${randomBytes(4_000).toString('latin1')}*/`, 'latin1')]);
    const result = budget.checkBudget('tracking.js', grown);
    expect(result.ok).to.equal(false);
    expect(result.gzipBytes).to.be.above(8192);
    expect(result.message).to.equal(`tracking.js: ${grown.length} bytes, ${result.gzipBytes} gzipped, ${result.brotliBytes} brotli: over the budget of 8192 bytes gzipped by ${result.gzipBytes - 8192}`);
    expect(budget.checkBudget('tracking.js', real, 1_000).ok, 'a smaller budget refuses the real build').to.equal(false);
  });

  it('builds an ES module and a script defining window.Tracking, of the package version', async () => {
    const manifest = JSON.parse(await readFile(join(projectRoot, 'sdk', 'package.json'), 'utf8')) as { version: string };
    expect(version).to.equal(manifest.version);
    const module = (await import(pathToFileURL(join(browserSdkDir, 'tracking.mjs')).href)) as Record<string, unknown>;
    expect(Object.keys(module).sort()).to.deep.equal(['createTracker', 'version']);
    expect(module.version).to.equal(version);
    const window: { Tracking?: { createTracker?: unknown; version?: unknown } } = {};
    runInNewContext(await readFile(join(browserSdkDir, 'tracking.js'), 'utf8'), window);
    expect(window.Tracking?.createTracker).to.be.a('function');
    expect(window.Tracking?.version).to.equal(version);
  });
});
