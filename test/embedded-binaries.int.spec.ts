import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { packagedBinaries } from '../src/db/pg-binaries.js';
import { createLogger } from '../src/logger.js';

const run = promisify(execFile);

describe('the embedded PostgreSQL binaries (int)', function () {
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
        const client = new pg.Client({ connectionString: server.url });
        await client.connect();
        const { rows } = await client.query<{ answer: number }>('SELECT 6 * 7 AS answer');
        await client.end();
        expect(rows[0]?.answer).to.equal(42);
      } finally {
        await server.stop();
      }
    } finally {
      await Promise.all([checkout, dataDir, cache].map((dir) => rm(dir, { recursive: true, force: true })));
    }
  });
});
