import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { parquetReadObjects } from 'hyparquet';
import { projectRoot } from '../src/paths.js';
import { TestApp, type Credentials } from './support/app.js';
import { tracking } from './support/cli.js';
import { sleep } from './support/eventually.js';
import { exportOf, ndjsonLinesOf } from './support/export-client.js';
import { bulkResults } from './support/replies.js';

const node = join(projectRoot, 'node_modules', '.bin', 'node');
const bin = join(projectRoot, 'bin', 'tracking.js');

describe('tracking export (e2e)', function () {
  this.timeout(240_000);
  let app: TestApp;
  let acme: Credentials;
  let dir: string | undefined;
  /** What the read API exports of acme: the bytes the CLI must write. */
  let expected: string;

  before(async () => {
    app = await TestApp.start({}, { erasureRunner: false });
    acme = await app.account('Acme');
    const globex = await app.account('Globex');
    // Enough events for an export of many pages, each with a payload of some size.
    for (let batch = 0; batch < 200; batch += 1) {
      const events = Array.from({ length: 100 }, (_, i) => ({ userId: `u-${i % 50}`, eventName: i % 2 ? 'Viewed' : 'Bought', eventData: { batch, i, note: 'x'.repeat(200) } }));
      expect(bulkResults(await app.ingest(acme, 'events/bulk', events)).every((r) => r.status === 'queued')).to.equal(true);
    }
    bulkResults(await app.ingest(globex, 'users/bulk', [{ userId: 'globex-only', attributes: {} }]));
    expected = (await exportOf(app, acme)).text;
    dir = await mkdtemp(join(tmpdir(), 'tracking-export-'));
  });
  after(async () => {
    await app.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const env = (): NodeJS.ProcessEnv => ({ ...process.env, DATABASE_URL: app.database.url, LOG_LEVEL: 'warn', ...(app.services.config.eventStoreUrl && { EVENTSTORE_URL: app.services.config.eventStoreUrl }) });

  it('writes to a file what the read API exports, byte for byte, and to stdout the same', async () => {
    const out = join(dir as string, 'all.ndjson');
    const run = await tracking(app, 'export', '--account', acme.licenseCode, '--out', out);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.match(/exported 20000 events of \S+ to .*all\.ndjson/);
    expect(await readFile(out, 'utf8')).to.equal(expected);
    const toStdout = await tracking(app, 'export', '--account', acme.licenseCode, '--kind', 'events', '--name', 'Bought', '--user', 'u-2');
    expect(toStdout.code, toStdout.stderr).to.equal(0);
    expect(toStdout.stdout).to.equal(ndjsonLinesOf(expected).filter((line) => line.data.userId === 'u-2' && line.data.eventName === 'Bought').map((line) => `${JSON.stringify(line)}\n`).join(''));
    expect(ndjsonLinesOf(toStdout.stdout)).to.have.length(400);
    expect(toStdout.stderr).to.match(/continue later with --after \S+/);
    // Run again on the same file: nothing new, nothing written twice.
    const again = await tracking(app, 'export', '--account', acme.licenseCode, '--out', out);
    expect(again.stderr).to.match(/exported 0 events/);
    expect(await readFile(out, 'utf8')).to.equal(expected);
  });

  it('continues a file whose export was killed with SIGKILL at any moment: the same bytes, no gap, no duplicate', async () => {
    for (const [format, kind] of [['ndjson', undefined], ['csv', 'events']] as const) {
      const out = join(dir as string, `killed.${format}`);
      const args = [bin, 'export', '--account', acme.licenseCode, '--out', out, '--format', format, ...(kind ? ['--kind', kind] : [])];
      let cutMidway = 0;
      for (let attempt = 0; attempt < 12 && cutMidway < 3; attempt += 1) {
        const child = spawn(node, args, { env: env(), stdio: 'ignore' });
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        const before = await stat(out).then((s) => s.size, () => 0);
        // Kill it as soon as it has written some more, or at a random moment.
        const deadline = Date.now() + 200 + Math.random() * 3000;
        while (Date.now() < deadline && (await stat(out).then((s) => s.size, () => 0)) <= before) await sleep(5);
        child.kill('SIGKILL');
        const code = await exited;
        const size = await stat(out).then((s) => s.size, () => 0);
        if (code === null && size > before) cutMidway += 1;
      }
      expect(cutMidway, `${format}: runs killed after writing part of the export`).to.be.at.least(1);
      const finished = await tracking(app, 'export', '--account', acme.licenseCode, '--out', out, '--format', format, ...(kind ? ['--kind', kind] : []));
      expect(finished.code, finished.stderr).to.equal(0);
      const whole = format === 'ndjson' ? expected : (await exportOf(app, acme, { format: 'csv', kind: 'events' })).text;
      expect(await readFile(out, 'utf8'), format).to.equal(whole);
    }
  });

  it('refuses wrong options naming them (exit 2), an unknown account and a file it cannot continue (exit 1)', async () => {
    const usage = await tracking(app, 'export', '--account', acme.licenseCode, '--kind', 'people');
    expect(usage.code).to.equal(2);
    expect(usage.stderr).to.match(/--kind must be one of users, events, products, productsevents/);
    const csv = await tracking(app, 'export', '--account', acme.licenseCode, '--format', 'csv');
    expect([csv.code, csv.stderr.includes('kind is required with format=csv')]).to.deep.equal([2, true]);
    expect((await tracking(app, 'export')).code).to.equal(2);
    const unknown = await tracking(app, 'export', '--account', 'no-such-account');
    expect([unknown.code, unknown.stderr]).to.deep.equal([1, 'tracking: no account with the license code or id no-such-account\n']);
    const out = join(dir as string, 'options.ndjson');
    expect((await tracking(app, 'export', '--account', acme.licenseCode, '--out', out, '--name', 'Viewed')).code).to.equal(0);
    const other = await tracking(app, 'export', '--account', acme.licenseCode, '--out', out, '--name', 'Bought');
    expect(other.code).to.equal(1);
    expect(other.stderr).to.contain('is an export made with other options');
    const foreign = join(dir as string, 'foreign.ndjson');
    await import('node:fs/promises').then((fs) => fs.writeFile(foreign, 'not ours\n'));
    const refused = await tracking(app, 'export', '--account', acme.licenseCode, '--out', foreign);
    expect([refused.code, await readFile(foreign, 'utf8')]).to.deep.equal([1, 'not ours\n']);
  });

  it('writes a Parquet file whole, under another name until done, and never over a file that exists', async () => {
    const out = join(dir as string, 'events.parquet');
    const run = await tracking(app, 'export', '--account', acme.licenseCode, '--out', out, '--format', 'parquet', '--kind', 'events', '--name', 'Bought');
    expect(run.code, run.stderr).to.equal(0);
    const bytes = await readFile(out);
    const rows = (await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer })) as Record<string, unknown>[];
    const bought = ndjsonLinesOf(expected).filter((line) => line.data.eventName === 'Bought');
    expect(rows.map((row) => row.event_id)).to.deep.equal(bought.map((line) => line.eventId));
    expect(await stat(`${out}.partial`).then(() => true, () => false)).to.equal(false);
    const again = await tracking(app, 'export', '--account', acme.licenseCode, '--out', out, '--format', 'parquet', '--kind', 'events');
    expect([again.code, again.stderr.includes('exists: a Parquet export is written whole')]).to.deep.equal([1, true]);
  });

  it('shows a progress bar on a terminal', async () => {
    const out = join(dir as string, 'progress.ndjson');
    const command = [node, bin, 'export', '--account', acme.licenseCode, '--out', out].map((arg) => `'${arg}'`).join(' ');
    // script(1) gives the command a terminal, as a user's shell would.
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let shown = '';
    child.stdout.on('data', (chunk: Buffer) => (shown += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, shown).to.equal(0);
    expect(shown).to.match(/100% \| 20000\/20000 events read \| 20000 written/);
    expect(await readFile(out, 'utf8')).to.equal(expected);
  });
});
