import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ImportSummary } from '../src/cli/import-progress.js';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { trackingImport } from './support/cli.js';

/** Requests the service answered with `status` on routes containing `route`, from its /metrics page. */
async function answered(app: TestApp, route: string, status: number): Promise<number> {
  const page = (await app.request<string>('GET', '/metrics')).body;
  return page
    .split('\n')
    .filter((line) => line.startsWith('tracking_http_requests_total{') && line.includes(route) && line.includes(`status="${status}"`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('tracking import under a rate limit (e2e)', function () {
  // The limit's window is a minute: the import waits for it once.
  this.timeout(180_000);
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { config: { productEventsPerMinute: 150 } });

  it('waits as Retry-After says when the product-event limit is used up, and stores every item once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'import-rate-'));
    try {
      const file = join(dir, 'views.ndjson');
      const lines = Array.from({ length: 250 }, (_, i) => JSON.stringify({ productId: `p-${i % 7}`, userId: `u-${i}`, eventName: 'view' }));
      await writeFile(file, `${lines.join('\n')}\n`);

      const result = await trackingImport(app, account, 'import', 'productsevents', file, '--json');
      expect(result.code, result.stdout + result.stderr).to.equal(0);
      const summary = JSON.parse(result.stdout) as ImportSummary;
      expect(summary).to.include({ read: 250, accepted: 250, alreadyStored: 0, rejected: 0, failed: 0 });
      expect(summary.retries).to.be.at.least(1);

      // 100 + 100 do not fit in 150 a minute: the second batch is refused (429) and, sent again
      // after the Retry-After the reply gave, accepted; no hammering on the limit meanwhile.
      const refused = await answered(app, 'productsevents/bulk', 429);
      expect(refused).to.be.within(1, 2);
      const stored = (await app.events()).filter((e) => e.event_type === 'ProductEventTracked');
      expect(stored).to.have.length(250);
      expect(new Set(stored.map((e) => e.metadata.trackId)).size).to.equal(250);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
