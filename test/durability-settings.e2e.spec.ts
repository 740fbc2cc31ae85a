import { expect } from 'chai';
import pg from 'pg';
import { freshDatabase, testServerIsEmbedded, type TestDatabase } from './support/database.js';
import { post, ServiceProcess } from './support/service-process.js';

/**
 * A 200 means the item is durably stored (docs/decisions.md, Replies): its append committed with
 * `synchronous_commit` on, on a server that flushes its write-ahead log (`fsync`, full page
 * writes). A trigger on the events table records the settings each append ran under, whatever the
 * pool, connection string or transaction set them to.
 */
describe('durability of the appends behind a 200 (e2e)', () => {
  let database: TestDatabase;
  let service: ServiceProcess | null = null;

  beforeEach(async () => {
    database = await freshDatabase();
    await withClient(database.url, (client) =>
      client.query(`
        CREATE TABLE append_settings (synchronous_commit text, fsync text, full_page_writes text);
        CREATE FUNCTION record_append_settings() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO append_settings
          VALUES (current_setting('synchronous_commit'), current_setting('fsync'), current_setting('full_page_writes'));
          RETURN NULL;
        END $$;
        CREATE TRIGGER record_append_settings AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION record_append_settings();`),
    );
  });

  afterEach(async () => {
    await service?.kill();
    service = null;
    await database.drop();
  });

  it('the service (dist/src/main.js) appends every kind, single and bulk, with synchronous_commit on, on a server with fsync and full_page_writes on', async () => {
    const adminToken = 'durability-admin-token';
    service = ServiceProcess.start('main', { DATABASE_URL: database.url, ADMIN_TOKEN: adminToken, PROJECTIONS: 'off' });
    await service.waitForHealth();
    const created = await post(service.base, '/admin/v1/accounts', { name: 'acme' }, adminToken);
    expect(created.status).to.equal(201);
    const { licenseCode, accessToken } = created.body as { licenseCode: string; accessToken: string };
    const items = {
      users: { userId: 'u-1', attributes: {} },
      events: { userId: 'u-1', eventName: 'Viewed' },
      products: { productId: 'p-1' },
      productsevents: { productId: 'p-1', userId: null, eventName: 'Viewed' },
    };
    for (const [endpoint, item] of Object.entries(items)) {
      // One after the other: each append is a transaction of its own.
      expect((await post(service.base, `/v1/accounts/${licenseCode}/${endpoint}`, item, accessToken)).status, endpoint).to.equal(200);
      expect((await post(service.base, `/v1/accounts/${licenseCode}/${endpoint}/bulk`, [item], accessToken)).status, endpoint).to.equal(200);
    }

    const { rows } = await withClient(database.url, (client) => client.query<Record<string, string>>('SELECT * FROM append_settings'));
    expect(rows).to.have.length.of.at.least(8);
    for (const row of rows) expect(row.synchronous_commit).to.equal('on');
    // A server of DATABASE_URL is the operator's to set up; the embedded one is the service's own.
    if (testServerIsEmbedded()) for (const row of rows) expect(row).to.deep.equal({ synchronous_commit: 'on', fsync: 'on', full_page_writes: 'on' });
  });
});

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
