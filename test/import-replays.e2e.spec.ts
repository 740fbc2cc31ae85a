import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImportSummary } from '../src/cli/import-progress.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { trackingImport } from './support/cli.js';
import { TestProxy } from './support/sdk-proxy.js';

/**
 * `tracking import` tells items it stored from items an earlier import stored, by the service's
 * `Idempotent-Replayed` reply header, and does not take a replay of its own lost reply for the latter.
 */
describe('tracking import: new and already stored items (e2e)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let account: Credentials;
  let dir: string;
  let proxy: TestProxy;
  servedApp((started) => ({ app, account } = started));
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'import-replays-'));
    proxy = await TestProxy.start(app.baseUrl);
  });
  afterEach(async () => {
    await proxy.stop();
    await rm(dir, { recursive: true, force: true });
  });

  async function importJson(baseUrl: string, file: string): Promise<ImportSummary> {
    const result = await trackingImport({ baseUrl }, account, 'import', 'events', file, '--json');
    expect(result.code, result.stdout + result.stderr).to.equal(0);
    return JSON.parse(result.stdout) as ImportSummary;
  }

  const tracked = async (): Promise<number> => (await app.events()).filter((e) => e.event_type === 'EventTracked').length;

  it('counts a batch whose reply was lost, and replayed to its retry, as new; a second import of the file as already stored', async () => {
    const file = join(dir, 'ticks.ndjson');
    const lines = Array.from({ length: 150 }, (_, i) => JSON.stringify({ userId: `r-${i % 9}`, eventName: 'tick', eventData: { n: i } }));
    await writeFile(file, `${lines.join('\n')}\n`);
    let lost = false;
    proxy.plan = (request) => {
      if (lost || !request.path.endsWith('/events/bulk')) return { kind: 'forward' };
      lost = true;
      return { kind: 'lose-reply' };
    };

    const first = await importJson(proxy.baseUrl, file);
    expect(first).to.include({ read: 150, accepted: 150, alreadyStored: 0, rejected: 0, failed: 0 });
    expect(first.retries).to.be.at.least(1);
    // The first batch was stored on its first attempt; the retry under its key got the recorded reply.
    const bulk = proxy.seen.filter((request) => request.path.endsWith('/events/bulk'));
    expect(bulk[1]?.headers['idempotency-key']).to.equal(bulk[0]?.headers['idempotency-key']);
    expect(await tracked()).to.equal(150);

    const second = await importJson(app.baseUrl, file);
    expect(second).to.include({ read: 150, accepted: 0, alreadyStored: 150, rejected: 0, failed: 0 });
    expect(await tracked()).to.equal(150);
  });
});
