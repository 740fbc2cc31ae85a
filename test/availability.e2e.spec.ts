import { expect } from 'chai';
import { TestApp, type Credentials } from './support/app.js';
import { allowConnections as allowDatabaseConnections } from './support/event-stores.js';
import { queued, requestError } from './support/replies.js';

const event = { userId: 'u-1', eventName: 'Viewed' };

describe('store unreachable (e2e)', () => {
  let app: TestApp;
  let account: Credentials;

  const allowConnections = (allow: boolean): Promise<void> => allowDatabaseConnections(app.database, allow);

  beforeEach(async () => {
    app = await TestApp.start();
    account = await app.account();
  });
  afterEach(async () => {
    // Connections must be allowed again for the app's cleanup to drop its database.
    await allowConnections(true);
    await app.stop();
  });

  it('answers 503 form A, never 200, while the database refuses connections, and recovers after', async () => {
    const before = queued(await app.ingest(account, 'events', event));
    await allowConnections(false);

    requestError(await app.ingest(account, 'events', event), 503);
    requestError(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }), 503);
    requestError(await app.ingest(account, 'users/bulk', [{ userId: 'u-1', attributes: {} }]), 503);
    requestError(await app.ingest(account, 'products', { productId: 'p-1' }), 503);
    requestError(await app.ingest(account, 'productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'Viewed' }), 503);
    requestError(await app.request('GET', '/healthz'), 503);
    requestError(await app.request('GET', '/readyz'), 503);
    // Alive all the same: a restart would not bring the database back.
    expect((await app.request('GET', '/livez')).status).to.equal(200);

    await allowConnections(true);
    const after = queued(await app.ingest(account, 'events', event));
    const health = await app.request('GET', '/healthz');
    expect(health.status).to.equal(200);
    expect((await app.request('GET', '/readyz')).status).to.equal(200);
    expect((await app.events()).map((e) => e.event_id)).to.deep.equal([before, after]);
  });

  it('answers 503, not 401 or 500, when the credentials cannot be checked', async () => {
    const fresh = await app.account('never-seen');
    await allowConnections(false);
    requestError(await app.ingest(fresh, 'events', event), 503);
  });
});
