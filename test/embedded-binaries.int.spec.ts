import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { packagedBinaries } from '../src/db/pg-binaries.js';
import { runningPostmaster } from '../src/db/postmaster.js';
import { rootPlace } from '../src/db/root-place.js';
import { createLogger } from '../src/logger.js';
import { capturedLog } from './support/log-lines.js';

const run = promisify(execFile);

async function query<Row extends object>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text)).rows;
  } finally {
    await client.end();
  }
}

const relocated = "running as root: user 'postgres' cannot enter DATA_DIR's parents, so the cluster lives outside it (DATA_DIR/pg links to it)";
const madeEnterable = "running as root: DATA_DIR made enterable (not readable) by user 'postgres', which runs the embedded PostgreSQL";

describe('the embedded PostgreSQL as root: binaries and cluster out of reach of its user (int)', function () {
  this.timeout(60_000);

  it("as root, runs binaries installed under a private directory (0700, as mktemp -d makes) from a copy the 'postgres' user can reach", async function () {
    if (process.getuid?.() !== 0) this.skip(); // only root runs the server as another user
    const checkout = await mkdtemp(join(tmpdir(), 'tracking-private-checkout-'));
    const dataDir = await mkdtemp(join(tmpdir(), 'tracking-binaries-data-'));
    const cache = join(tmpdir(), `tracking-binaries-cache-${process.pid}-${Date.now()}`);
    try {
      expect((await stat(checkout)).mode & 0o777).to.equal(0o700);
      // The package's binaries as a checkout in that directory holds them (hard links where possible: fast).
      const { binaries } = await packagedBinaries();
      const privateDir = join(checkout, 'native');
      await run('cp', ['-al', binaries.dir, privateDir]).catch(() => run('cp', ['-a', binaries.dir, privateDir]));
      const privateBinaries = { dir: privateDir, postgres: join(privateDir, 'bin', 'postgres'), initdb: join(privateDir, 'bin', 'initdb') };

      const server = await startEmbeddedPostgres(dataDir, createLogger('silent'), { binaries: privateBinaries, binariesCache: cache });
      try {
        const rows = await query<{ answer: number }>(server.url, 'SELECT 6 * 7 AS answer');
        expect(rows[0]?.answer).to.equal(42);
      } finally {
        await server.stop();
      }
    } finally {
      await Promise.all([checkout, dataDir, cache].map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });

  it('as root with DATA_DIR inside a private directory, keeps the cluster in /var/lib/tracking-ingestion behind the link DATA_DIR/pg, and starts on it again through that link', async function () {
    if (process.getuid?.() !== 0) this.skip();
    const privateDir = await mkdtemp(join(tmpdir(), 'tracking-private-data-'));
    const dataDir = join(privateDir, 'data');
    await mkdir(dataDir, { mode: 0o700 });
    const { log, lines } = capturedLog();
    let cluster: string | null = null;
    try {
      const first = await startEmbeddedPostgres(dataDir, log);
      try {
        cluster = await readlink(join(dataDir, 'pg'));
        expect(dirname(cluster)).to.equal(rootPlace);
        expect(basename(cluster)).to.match(/^[0-9a-f]{16}$/);
        expect(runningPostmaster(cluster), 'the server runs on the cluster the link names').to.not.equal(null);
        await query(first.url, 'CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)');
      } finally {
        await first.stop();
      }
      expect(lines.find((line) => line.msg === relocated)).to.include({ dataDir, cluster });
      expect(lines.find((line) => line.msg === madeEnterable)).to.include({ dataDir, from: '700', to: '711' });
      expect((await stat(dataDir)).mode & 0o777).to.equal(0o711);

      lines.length = 0;
      const second = await startEmbeddedPostgres(dataDir, log);
      try {
        expect(await readlink(join(dataDir, 'pg'))).to.equal(cluster);
        expect(await query<{ n: number }>(second.url, 'SELECT n FROM kept')).to.deep.equal([{ n: 42 }]);
      } finally {
        await second.stop();
      }
      // Both are logged once, when done, not at every start.
      expect(lines.map((line) => line.msg)).to.not.include(relocated);
      expect(lines.map((line) => line.msg)).to.not.include(madeEnterable);
    } finally {
      await rm(privateDir, { recursive: true, force: true });
      // Only the cluster this test made: others in that place belong to other DATA_DIRs.
      if (cluster !== null && dirname(cluster) === rootPlace) await rm(cluster, { recursive: true, force: true });
    }
  });
});
