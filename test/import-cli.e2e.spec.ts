import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trackingImport } from './support/cli.js';

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/** `tracking import` before it sends anything: usage errors and an unreachable service. */
describe('tracking import: refusals before sending (e2e)', () => {
  let dir: string;
  const account = { licenseCode: 'ffffffffffffffffffffffff', accessToken: 'some-token' };
  const nowhere = { baseUrl: 'http://127.0.0.1:9' };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'import-cli-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('names the kinds, and the formats it reads, on a usage error (exit code 2)', async () => {
    const file = join(dir, 'items.txt');
    await writeFile(file, '{}\n');
    const kind = await trackingImport(nowhere, account, 'import', 'leads', file);
    expect(kind.code).to.equal(2);
    expect(kind.stderr).to.contain('usage: tracking import <users|events|products|productsevents> <file>');
    const format = await trackingImport(nowhere, account, 'import', 'users', file);
    expect(format.code).to.equal(2);
    expect(format.stderr).to.contain(`cannot tell the format of ${file} from its extension: use --format ndjson or --format csv`);
    const missing = await trackingImport(nowhere, account, 'import', 'users', join(dir, 'none.csv'));
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain('cannot read').and.contain('ENOENT');
  });

  it('fails at once, naming the URL, when nothing answers there', async () => {
    const file = join(dir, 'users.ndjson');
    await writeFile(file, `${JSON.stringify({ userId: 'u-1', attributes: {} })}\n`);
    const url = `http://127.0.0.1:${await closedPort()}`;
    const result = await trackingImport({ baseUrl: url }, account, 'import', 'users', file);
    expect(result.code).to.equal(1);
    expect(result.stderr).to.contain(`cannot reach the service at ${url}`).and.contain('ECONNREFUSED');
  });
});
