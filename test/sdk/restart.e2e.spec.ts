import { expect } from 'chai';
import type { ItemResult } from '@tracking-ingestion/sdk';
import { portIsFree } from '../../src/net.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { until } from '../support/eventually.js';
import { expectEachStoredOnce, queuedTrackId, sdkClient, timesStoredByTrackId } from '../support/sdk.js';
import { post, ServiceProcess } from '../support/service-process.js';

const adminToken = 'sdk-restart-admin';
const items = 4_000;
/** The service is stopped once this many items are stored. */
const stopAfter = 1_500;
/** Items the producer lets the client hold: a steady stream rather than one burst. */
const window = 200;

/**
 * A loopback port free now, below Linux's ephemeral range (32768 and up): while the service is
 * down, no outgoing connection can take it, so the service starts again on the same address.
 */
async function portBelowEphemeralRange(): Promise<number> {
  const first = 20_000 + Math.floor(Math.random() * 10_000);
  for (let port = first; port < first + 1_000; port += 1) if (await portIsFree(port)) return port;
  throw new Error(`no free port from ${first} to ${first + 999}`);
}

/** The SDK against `npm start` as a child process, stopped and started again on the same database and port. */
describe('SDK across a restart of the service (e2e)', function () {
  this.timeout(180_000);
  let database: TestDatabase;
  let service: ServiceProcess | null = null;

  beforeEach(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await service?.kill();
    service = null;
    await database.drop();
  });

  it('the service stopped (SIGTERM) and started again in the middle of a stream: every item queued, each stored once (default retry options)', async () => {
    const env = { DATABASE_URL: database.url, ADMIN_TOKEN: adminToken, PORT: String(await portBelowEphemeralRange()) };
    const first = ServiceProcess.start('main', env);
    service = first;
    await first.waitForHealth();
    const created = await post(first.base, '/admin/v1/accounts', { name: 'restart' }, adminToken);
    expect(created.status).to.equal(201);
    const account = created.body as { licenseCode: string; accessToken: string };
    // Default options (flushAt 20, flushIntervalMs 1000, retries for 120 s with waits of at most 5 s).
    const client = sdkClient(first.base, account);
    const send = (i: number): Promise<ItemResult> => {
      const userId = `u-${i % 100}`;
      if (i % 4 === 0) return client.track({ userId, eventName: 'stream', eventData: { i } });
      if (i % 4 === 1) return client.identify({ userId, attributes: { i } });
      if (i % 4 === 2) return client.product({ productId: `p-${i % 100}`, properties: { i } });
      return client.productEvent({ productId: `p-${i % 100}`, userId, eventName: 'view', eventData: { i } });
    };
    const results: Promise<ItemResult>[] = [];
    const producer = (async () => {
      for (let i = 0; i < items; i += 1) {
        if (i >= window) await results[i - window];
        results.push(send(i));
      }
    })();

    await until(() => client.stats().sent >= stopAfter, 60_000, () => `${stopAfter} items stored: ${JSON.stringify(client.stats())}`);
    first.child.kill('SIGTERM');
    expect(await first.exited, 'exit code after SIGTERM').to.equal(0);
    const sentBeforeStop = client.stats().sent;
    expect(sentBeforeStop, 'items stored when the service stopped').to.be.below(items);
    // Batches meet the stopped service, and wait for their retries.
    await until(() => client.stats().retried > 0, 30_000, () => `a batch refused by the stopped service: ${JSON.stringify(client.stats())}`);

    const second = ServiceProcess.start('main', env);
    service = second;
    await second.waitForHealth();
    expect(second.base).to.equal(first.base);
    await producer;
    await client.close();

    const trackIds = (await Promise.all(results)).map(queuedTrackId);
    expect(client.stats()).to.include({ queued: 0, inFlight: 0, sent: items, failed: 0 });
    expectEachStoredOnce(await timesStoredByTrackId(database.url), trackIds);
  });
});
