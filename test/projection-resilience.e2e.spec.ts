import { projectionStatus } from '../projections/runner/status.js';
import { expect } from 'chai';
import { servedApp, type Credentials, type TestApp } from './support/app.js';
import { asAdmin } from './support/database.js';
import { eventually } from './support/eventually.js';
import { queued } from './support/replies.js';

describe('projection workers when the database drops their connections (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  it('survive sessions killed while idle, take their locks again and go on applying', async () => {
    queued(await app.ingest(account, 'users', { userId: 'before', attributes: {} }));
    await app.projected();
    const sessions = async (): Promise<number> =>
      (
        await app.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'tracking-projection %'",
        )
      ).rows[0]?.n ?? 0;
    // The worker's own session and those of the lanes that applied a batch.
    const before = await sessions();
    expect(before).to.be.at.least(2);
    const killed = await asAdmin((client) =>
      client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE 'tracking-projection %'", [
        app.database.name,
      ]),
    );
    expect(killed.rowCount).to.equal(before);
    queued(await app.ingest(account, 'users', { userId: 'after', attributes: {} }));
    await app.projected(15_000);
    const lead = await app.get<{ userId: string }>(`/admin/v1/accounts/${account.licenseCode}/leads/after`, `Bearer ${account.accessToken}`);
    expect(lead.status).to.equal(200);
    expect(lead.body.userId).to.equal('after');
    // The lane that applied it is connected again; the worker's own session reconnects at its
    // next heartbeat (a quarter lease), which may come after the batch.
    await eventually(async () => (await sessions()) >= 2, 10_000, () => 'sessions open again: the worker\'s own and a lane\'s');
    // Still the one worker, holding every part.
    const { workers, parts } = await projectionStatus(app.pool, app.services.store);
    expect(workers).to.have.length(1);
    expect(workers[0]?.parts).to.have.length(parts.length);
  });
});
