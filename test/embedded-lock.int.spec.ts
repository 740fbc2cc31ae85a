import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { postgresUser } from '../src/db/pg-binaries.js';
import { createLogger } from '../src/logger.js';

describe('the embedded PostgreSQL lock file (int)', function () {
  this.timeout(60_000);

  it('starts although postmaster.pid names a live process that is not its server (a pid reused after a crash)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tracking-lock-'));
    const log = createLogger('silent');
    // PostgreSQL takes a pid it may not signal for a stale one: the other program runs as the server's user.
    const runAs = process.getuid?.() === 0 ? await postgresUser() : {};
    const other = spawn('sleep', ['60'], { stdio: 'ignore', ...runAs });
    try {
      const first = await startEmbeddedPostgres(dataDir, log);
      const lockFile = join(dataDir, 'pg', 'postmaster.pid');
      const lines = (await readFile(lockFile, 'utf8')).split('\n');
      await first.stop();
      // As a crash leaves it, but naming a pid now taken by another program.
      lines[0] = String(other.pid);
      await writeFile(lockFile, lines.join('\n'));

      const second = await startEmbeddedPostgres(dataDir, log);
      try {
        const client = new pg.Client({ connectionString: second.url });
        await client.connect();
        await client.end();
      } finally {
        await second.stop();
      }
      expect(other.exitCode, 'the other program is left alone').to.equal(null);
    } finally {
      other.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
