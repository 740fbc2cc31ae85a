import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../src/paths.js';

const run = promisify(execFile);
const node = join(projectRoot, 'node_modules', '.bin', 'node');
const bin = join(projectRoot, 'bin', 'tracking.js');

/** `tracking <args>` on the embedded database of `dataDir`, as a user runs it without DATABASE_URL. */
async function tracking(dataDir: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', LOG_FORMAT: 'json' };
  delete env.DATABASE_URL;
  delete env.EVENTSTORE_URL;
  try {
    const { stdout, stderr } = await run(node, [bin, ...args], { env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

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
      const result = await tracking(dataDir, ...args);
      expect(result.code, args.join(' ')).to.equal(1);
      expect(result.stderr).to.contain(`tracking: no database found in ${dataDir}`).and.contain('DATA_DIR');
      expect(result.stdout).to.equal('');
    }
    expect(existsSync(dataDir)).to.equal(false);
  });

  it('says on stderr when `accounts create` made a new empty database, and finds it the next time', async () => {
    const created = await tracking(dataDir, 'accounts', 'create', 'Acme', '--json');
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stderr).to.contain(`tracking: no database found in ${dataDir}: created a new empty one`);
    const { licenseCode } = JSON.parse(created.stdout) as { licenseCode: string };

    const listed = await tracking(dataDir, 'accounts', 'list');
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stderr).not.to.contain('no database found');
    expect(listed.stdout).to.contain(licenseCode);
  });
});
