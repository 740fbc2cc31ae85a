import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackingOnDataDir } from './support/cli.js';

describe('the tracking command where DATA_DIR holds no database (e2e)', function () {
  this.timeout(120_000);
  let parent: string;
  let dataDir: string;

  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'tracking-cli-'));
    dataDir = join(parent, 'data');
  });
  afterEach(() => rm(parent, { recursive: true, force: true }));

  it('refuses to report on a database it would have to make, and makes nothing', async () => {
    for (const args of [['projections', 'status'], ['accounts', 'list'], ['audit', '0193a000-0000-7000-8000-000000000000']]) {
      const result = await trackingOnDataDir(dataDir, ...args);
      expect(result.code, args.join(' ')).to.equal(1);
      expect(result.stderr).to.contain(`tracking: no database found in ${dataDir}`).and.contain('DATA_DIR');
      expect(result.stdout).to.equal('');
    }
    expect(existsSync(dataDir)).to.equal(false);
  });

  it('says on stderr when `accounts create` made a new empty database, and finds it the next time', async () => {
    const created = await trackingOnDataDir(dataDir, 'accounts', 'create', 'Acme', '--json');
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stderr).to.contain(`tracking: no database found in ${dataDir}: created a new empty one`);
    const { licenseCode } = JSON.parse(created.stdout) as { licenseCode: string };

    const listed = await trackingOnDataDir(dataDir, 'accounts', 'list');
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stderr).not.to.contain('no database found');
    expect(listed.stdout).to.contain(licenseCode);
  });
});
