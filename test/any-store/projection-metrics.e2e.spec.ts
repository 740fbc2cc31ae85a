import { expect } from 'chai';
import { servedApp, type Credentials, type TestApp } from '../support/app.js';
import { sample } from '../support/metrics.js';
import { queued } from '../support/replies.js';

describe('projection metrics (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  it('reports events applied, lag and the active worker per projection at /metrics', async () => {
    for (let i = 0; i < 3; i += 1) queued(await app.ingest(account, 'users', { userId: `u${i}`, attributes: {} }));
    queued(await app.ingest(account, 'events', { userId: 'u0', eventName: 'login' }));
    await app.projected();
    const reply = await app.request<string>('GET', '/metrics');
    expect(reply.status).to.equal(200);
    const page = reply.body;
    expect(sample(page, 'tracking_projection_events_applied_total', 'projection="leads"')).to.equal(3);
    expect(sample(page, 'tracking_projection_events_applied_total', 'projection="user-events"')).to.equal(1);
    expect(sample(page, 'tracking_projection_events_applied_total', 'projection="track-index"')).to.equal(4);
    for (const projection of ['leads', 'user-events', 'products', 'track-index']) {
      expect(sample(page, 'tracking_projection_active', `projection="${projection}"`), projection).to.equal(1);
      expect(sample(page, 'tracking_projection_lag_events', `projection="${projection}"`), projection).to.be.a('number');
      expect(sample(page, 'tracking_projection_lag_seconds', `projection="${projection}"`), projection).to.be.at.least(0);
    }
  });
});
