import { expect } from 'chai';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { asAdmin } from './support/database.js';
import { queued } from './support/replies.js';

describe('projection workers when the database drops their connections (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  it('survive sessions killed while idle, take their locks again and go on applying', async () => {
    queued(await app.ingest(account, 'users', { userId: 'before', attributes: {} }));
    await app.projected();
    const killed = await asAdmin((client) =>
      client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'tracking-projection %'", [
        app.database.name,
      ]),
    );
    expect(killed.rowCount).to.equal(4);
    queued(await app.ingest(account, 'users', { userId: 'after', attributes: {} }));
    await app.projected(15_000);
    const lead = await app.get<{ userId: string }>(`/admin/v1/accounts/${account.licenseCode}/leads/after`, `Bearer ${account.accessToken}`);
    expect(lead.status).to.equal(200);
    expect(lead.body.userId).to.equal('after');
    const { rows } = await app.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'tracking-projection %'",
    );
    expect(rows[0]?.n).to.equal(4);
  });
});
