import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { TestApp, type Credentials } from './support/app.js';
import { asAdmin } from './support/database.js';
import { sleep } from './support/eventually.js';
import { exportOf, ndjsonLinesOf } from './support/export-client.js';
import { bulkResults } from './support/replies.js';

/** Bytes a loopback connection's two buffers may grow to (received and sent); 36 MiB where the kernel does not say. */
async function socketBufferMax(): Promise<number> {
  const largest = async (name: string, fallback: number): Promise<number> => {
    const text = await readFile(`/proc/sys/net/ipv4/${name}`, 'utf8').catch(() => '');
    const max = Number(text.trim().split(/\s+/)[2]);
    return Number.isFinite(max) && max > 0 ? max : fallback;
  };
  return (await largest('tcp_rmem', 32 * 2 ** 20)) + (await largest('tcp_wmem', 4 * 2 ** 20));
}

describe('an export while the database goes away (e2e)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let acme: Credentials;

  before(async () => {
    app = await TestApp.start({}, { erasureRunner: false });
    acme = await app.account('Acme');
    // More NDJSON than a loopback connection holds, so the service is still reading when the
    // database goes. The kernel grows a socket's buffers as it needs to, up to the largest of
    // net.ipv4.tcp_rmem and tcp_wmem (32 MiB and 4 MiB on some machines): 8 MB once fitted whole.
    const textBytes = Math.ceil((1.5 * (await socketBufferMax())) / 20_000);
    for (let request = 0; request < 200; request += 1) {
      bulkResults(await app.ingest(acme, 'events/bulk', Array.from({ length: 100 }, (_, i) => ({ userId: `u-${i}`, eventName: 'Viewed', eventData: { request, i, text: 'x'.repeat(textBytes) } }))));
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
