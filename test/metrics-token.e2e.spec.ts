import { expect } from 'chai';
import { loadConfig } from '../src/config.js';
import { startOpsServer, type OpsServer } from '../src/ops-server.js';
import { TestApp } from './support/app.js';
import { requestError } from './support/replies.js';

/** GET /metrics of `base` with an Authorization header (none when undefined). */
async function metricsPage(base: string, authorization?: string): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await fetch(`${base}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

function refused(page: { status: number; text: string; headers: Headers }): void {
  expect(page.status, page.text).to.equal(401);
  expect(JSON.parse(page.text)).to.deep.equal({ error: 'METRICS_TOKEN is set: /metrics needs Authorization: Bearer <METRICS_TOKEN>', code: 401 });
  expect(page.headers.get('www-authenticate')).to.equal('Bearer');
  expect(page.text).not.to.contain('tracking_http_requests_total');
}

describe('METRICS_TOKEN (e2e)', () => {
  const metricsToken = 'a-metrics-token';
  let app: TestApp;
  afterEach(() => app.stop());

  it('keeps /metrics open when METRICS_TOKEN is not set', async () => {
    app = await TestApp.start();
    expect(loadConfig({}).metricsToken).to.equal(undefined);
    const page = await metricsPage(app.baseUrl);
    expect(page.status).to.equal(200);
    expect(page.text).to.contain('tracking_http_requests_total');
  });

  it('serves /metrics only to a request with the token when METRICS_TOKEN is set, on the API and on a worker port', async () => {
    expect(loadConfig({ METRICS_TOKEN: metricsToken }).metricsToken).to.equal(metricsToken);
    app = await TestApp.start({ metricsToken });
    const worker: OpsServer = await startOpsServer(
      {
        registry: app.services.metrics.registry,
        pool: app.pool,
        store: app.services.store,
        projectionWorker: () => 'active',
        isStopping: () => false,
        log: app.services.log,
        metricsToken,
      },
      0,
      '127.0.0.1',
    );
    try {
      for (const base of [app.baseUrl, `http://127.0.0.1:${worker.port}`]) {
        refused(await metricsPage(base));
        refused(await metricsPage(base, 'Bearer not-the-metrics-token'));
        refused(await metricsPage(base, `Bearer ${metricsToken}x`));
        const page = await metricsPage(base, `Bearer ${metricsToken}`);
        expect(page.status, base).to.equal(200);
        expect(page.text).to.contain('# TYPE tracking_http_requests_total counter');
        // Health needs no token.
        expect((await fetch(`${base}/livez`)).status).to.equal(200);
      }
      // The admin token is not the metrics token.
      requestError(await app.get('/metrics', 'Bearer test-admin-token'), 401);
    } finally {
      await worker.close();
    }
  });
});
