import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../src/eventstore/port.js';
import { TestApp, type Credentials } from './support/app.js';
import { EsdbTestServer } from '../testing/esdb-test-server.js';
import { accountRefs } from './support/id-refs.js';
import { queued } from './support/replies.js';

/**
 * Parking on EventStoreDB, which may deliver an event id twice: a parked event's id counts as
 * handled, so a second delivery is not parked (nor applied) again.
 */
describe('parked events on EventStoreDB (e2e)', function () {
  this.timeout(30_000);
  let server: EsdbTestServer;
  let app: TestApp;
  let account: Credentials;

  beforeEach(async () => {
    server = await EsdbTestServer.start();
    app = await TestApp.start({ eventStoreUrl: server.connectionString }, { projections: true });
    account = await app.account();
  });
  afterEach(async () => {
    await app.stop();
    await server.close();
  });

  it('skips a second delivery of a parked event, and keeps every other event of its batches applied once', async () => {
    const { rows } = await app.pool.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [account.licenseCode]);
    const accountId = rows[0]?.id as string;
    const id = randomUUID();
    const poison: NewEvent = {
      id,
      stream: `user-${accountId}-${(await accountRefs(app, accountId)).user('poisoned')}`,
      type: 'UserUpserted',
      data: {
        userId: 'poisoned',
        profile: { birth_date: '9999-12-31T23:59:59-2359' },
        attributes: {},
        attributeTypes: {},
        instants: { birth_date: '+010000-01-01T23:58:59.000Z' },
      },
      metadata: { trackId: id, accountId, receivedAt: new Date().toISOString(), schemaVersion: 1 },
    };
    queued(await app.ingest(account, 'users', { userId: 'ann', attributes: {} }));
    await app.services.store.append([poison]);
    queued(await app.ingest(account, 'users', { userId: 'ann', firstName: 'Ann', attributes: {} }));
    await app.projected();
    server.deduplicate = false;
    await app.services.store.append([poison]);
    server.deduplicate = true;
    queued(await app.ingest(account, 'users', { userId: 'ann', lastName: 'Lee', attributes: {} }));
    await app.projected();

    const parked = await app.pool.query<{ event_id: string; attempts: number }>("SELECT event_id, attempts FROM projection_parked_events WHERE projection = 'leads'");
    expect(parked.rows).to.deep.equal([{ event_id: id, attempts: 1 }]);
    const leads = await app.pool.query<{ user_id: string; version: number; first_name: string; last_name: string }>(
      "SELECT user_id, version, first_name, last_name FROM leads WHERE account_id = $1 ORDER BY user_id",
      [accountId],
    );
    expect(leads.rows).to.deep.equal([{ user_id: 'ann', version: 3, first_name: 'Ann', last_name: 'Lee' }]);
  });
});
