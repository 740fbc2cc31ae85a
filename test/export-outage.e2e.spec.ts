import { expect } from 'chai';
import { TestApp, type Credentials } from './support/app.js';
import { asAdmin } from './support/database.js';
import { sleep } from './support/eventually.js';
import { exportOf, ndjsonLinesOf } from './support/export-client.js';
import { bulkResults } from './support/replies.js';

describe('an export while the database goes away (e2e)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let acme: Credentials;

  before(async () => {
    app = await TestApp.start({}, { erasureRunner: false });
    acme = await app.account('Acme');
    // About 56 MB of NDJSON: more than a loopback connection holds, so the service is still reading
    // when the database goes. The kernel grows a socket's buffers as it needs to (here up to 32 MiB
    // received and 4 MiB sent, net.ipv4.tcp_rmem and tcp_wmem): 8 MB once fitted whole.
    for (let request = 0; request < 200; request += 1) {
      bulkResults(await app.ingest(acme, 'events/bulk', Array.from({ length: 100 }, (_, i) => ({ userId: `u-${i}`, eventName: 'Viewed', eventData: { request, i, text: 'x'.repeat(2_500) } }))));
    }
  });
  after(() => app.stop());

  const connections = (allow: boolean): Promise<unknown> =>
    asAdmin(async (client) => {
      await client.query(`ALTER DATABASE ${app.database.name} ALLOW_CONNECTIONS ${allow}`);
      if (!allow) await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [app.database.name]);
    });

  it('cuts the reply, never ends it as if complete; once it is back, the export continues from the last line received', async () => {
    const whole = ndjsonLinesOf((await exportOf(app, acme)).text).map((line) => line.eventId);
    expect(whole).to.have.length(20_000);
    let cut;
    try {
      cut = await exportOf(app, acme, {}, {
        whilePaused: async () => {
          // The service has filled the socket and waits for the client; meanwhile the database goes.
          await sleep(500);
          await connections(false);
        },
      });
    } finally {
      await connections(true);
    }
    expect(cut.status).to.equal(200);
    expect(cut.complete, 'the reply ended as a complete one').to.equal(false);
    const got = ndjsonLinesOf(cut.text);
    expect(got.length).to.be.above(0).and.below(whole.length);
    const rest = await exportOf(app, acme, { after: got.at(-1)?.cursor });
    expect(rest.complete).to.equal(true);
    const joined = [...got, ...ndjsonLinesOf(rest.text)].map((line) => line.eventId);
    expect(joined.length === whole.length && joined.every((id, i) => id === whole[i])).to.equal(true);
  });
});
