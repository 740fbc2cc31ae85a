import { expect } from 'chai';
import { EsdbTestServer } from '../testing/esdb-test-server.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { allowConnections } from './support/event-stores.js';
import { eventually, until } from './support/eventually.js';
import { capturedLog } from './support/log-lines.js';
import { bulkResults, queued, requestError } from './support/replies.js';

/**
 * The service on the EventStoreDB test double failing as the server does (docs/eventstoredb.md):
 * each failure is a 503 form A with Retry-After, never a 500; what was acknowledged stays; a retry
 * with the same Idempotency-Key leaves the read models as they are; appends recover by themselves.
 */
describe('EventStoreDB failures: 503, then recovery (e2e)', function () {
  this.timeout(60_000);
  let server: EsdbTestServer;
  let app: TestApp | undefined;
  let account: Credentials;

  const start = async (eventStoreUrl = server.connectionString, log = capturedLog().log): Promise<TestApp> => {
    const started = await TestApp.start({ eventStoreUrl }, { projections: true, log });
    app = started;
    account = await started.account();
    return started;
  };

  beforeEach(async () => {
    server = await EsdbTestServer.start();
  });
  afterEach(async () => {
    await server.restart().catch(() => undefined);
    await app?.stop();
    app = undefined;
    await server.close();
  });

  const withKey = (key: string) => ({ headers: { 'idempotency-key': key } });
  const threeEvents = [1, 2, 3].map((n) => ({ userId: 'u-1', eventName: `step-${n}`, eventData: { n } }));

  it('not ready, too busy: 503 with Retry-After, healthz 503, nothing stored; the retry stores the item once', async () => {
    const served = await start();
    for (const reason of ['not-ready', 'too-busy'] as const) {
      server.refuseWrites = reason;
      storeUnavailable(await served.ingest(account, 'users', { userId: 'u-1', attributes: {} }, withKey('refused')));
      storeUnavailable(await served.get('/healthz'));
    }
    expect(server.size).to.equal(0);

    server.refuseWrites = null;
    queued(await served.ingest(account, 'users', { userId: 'u-1', attributes: {} }, withKey('refused')));
    expect((await served.get('/healthz')).status).to.equal(200);
    await served.projected();
    expect(server.size).to.equal(1);
    expect((await readModels(served)).leads).to.have.length(1);
  });

  it('a write the server timed out commits after all: 503, then stored; the retry stores nothing new, read models unchanged', async () => {
    const served = await start();
    server.timeOutWrites = { commitAfterMs: 0 };
    storeUnavailable(await served.ingest(account, 'events/bulk', threeEvents, withKey('late')));
    await until(() => server.size === 3, 10_000, () => `the server holds ${server.size} events, not 3`);
    server.timeOutWrites = null;
    await served.projected();
    const before = await readModels(served);
    expect(before.userEvents).to.have.length(3);

    const results = bulkResults(await served.ingest(account, 'events/bulk', threeEvents, withKey('late')));
    expect(results.map((r) => r.status)).to.deep.equal(['queued', 'queued', 'queued']);
    expect(results.map((r) => r.trackID)).to.deep.equal(before.trackIndex.map((row) => row.event_id));
    expect(server.size).to.equal(3);
    await served.projected();
    expect(await readModels(served)).to.deep.equal(before);
  });

  it('a repeat the server partly remembers (WrongExpectedVersion with expected revision any): 200, read models unchanged', async () => {
    const served = await start();
    server.timeOutWrites = { commitAfterMs: 0 };
    storeUnavailable(await served.ingest(account, 'events/bulk', threeEvents, withKey('partly')));
    await until(() => server.size === 3, 10_000, () => `the server holds ${server.size} events, not 3`);
    server.timeOutWrites = null;
    await served.projected();
    const before = await readModels(served);
    const ids = before.trackIndex.map((row) => String(row.event_id));
    expect(ids).to.have.length(3);
    // The first id still remembered, the later ones evicted from the server's recent-id cache.
    server.forgetRecentIds(ids.slice(1));

    const results = bulkResults(await served.ingest(account, 'events/bulk', threeEvents, withKey('partly')));
    expect(results.map((r) => r.trackID)).to.deep.equal(ids);
    // Written one event at a time: the first recognised, the two others stored again.
    expect(server.size).to.equal(5);
    await served.projected();
    expect(await readModels(served)).to.deep.equal(before);
  });

  it('discovery fails while the cluster is away: 503 meanwhile, then appends and projections recover without a restart', async () => {
    const { log, lines } = capturedLog('warn');
    const served = await start(server.discoverConnectionString, log);
    queued(await served.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    await served.projected();

    server.gossip = 'unreachable';
    await server.stop();
    storeUnavailable(await served.ingest(account, 'users', { userId: 'u-2', attributes: {} }, withKey('away')));
    await server.restart();
    // The node is back, but discovery still finds no member to connect to.
    storeUnavailable(await served.ingest(account, 'users', { userId: 'u-2', attributes: {} }, withKey('away')));
    storeUnavailable(await served.get('/healthz'));
    expect(lines.some((line) => line.msg.startsWith('EventStoreDB client replaced'))).to.equal(true);

    server.gossip = 'leader';
    queued(await retriedWhile503(() => served.ingest(account, 'users', { userId: 'u-2', attributes: {} }, withKey('away')), 10_000));
    expect((await served.get('/healthz')).status).to.equal(200);
    // The projections' subscriptions moved to the new client with it.
    let leadStatus = 0;
    await until(
      async () => (leadStatus = (await served.get(`/admin/v1/accounts/${account.licenseCode}/leads/u-2`, `Bearer ${adminToken}`)).status) === 200,
      10_000,
      () => `the lead u-2 still answers ${leadStatus}`,
    );
    expect((await readModels(served)).leads.map((lead) => lead.profile_id)).to.deep.equal(['u-1', 'u-2']);
  });

  it('a server without "caught up" messages (before 24.2): the projections still catch up', async () => {
    server.caughtUpMessages = false;
    const served = await start();
    queued(await served.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    queued(await served.ingest(account, 'events', { userId: 'u-1', eventName: 'login' }));
    await served.projected();
    const models = await readModels(served);
    expect([models.leads.length, models.userEvents.length]).to.deep.equal([1, 1]);
  });

  it('on PostgreSQL as well: a store failure is 503 with Retry-After, and the retry stores the item once', async () => {
    const served = await TestApp.start({ eventStoreUrl: undefined });
    app = served;
    account = await served.account();
    await allowConnections(served.database, false);
    try {
      storeUnavailable(await served.ingest(account, 'users', { userId: 'u-1', attributes: {} }, withKey('pg')));
    } finally {
      await allowConnections(served.database, true);
    }
    const trackID = queued(await retriedWhile503(() => served.ingest(account, 'users', { userId: 'u-1', attributes: {} }, withKey('pg')), 5_000));
    expect((await served.events()).map((e) => e.event_id)).to.deep.equal([trackID]);
  });
});

/** The reply to `ingest`, sent again every 100 ms while it is 503, for up to `timeoutMs`. */
async function retriedWhile503(ingest: () => Promise<Reply>, timeoutMs: number): Promise<Reply> {
  let last: Reply | undefined;
  return eventually(
    async () => {
      last = await ingest();
      return last.status !== 503 && last;
    },
    timeoutMs,
    () => `still 503: ${JSON.stringify(last?.body)}`,
    100,
  );
}

/** The 503 of a store failure: form A, and a Retry-After in seconds. */
function storeUnavailable(reply: Reply): void {
  requestError(reply, 503);
  expect(reply.headers.get('retry-after')).to.equal('1');
}

async function readModels(app: TestApp): Promise<Record<'leads' | 'products' | 'userEvents' | 'productEvents' | 'trackIndex', Record<string, unknown>[]>> {
  const rows = async (sql: string): Promise<Record<string, unknown>[]> => (await app.pool.query(sql)).rows;
  return {
    leads: await rows('SELECT * FROM leads ORDER BY profile_id'),
    products: await rows('SELECT * FROM products ORDER BY product_id'),
    userEvents: await rows('SELECT * FROM user_events ORDER BY event_id'),
    productEvents: await rows('SELECT * FROM product_events ORDER BY event_id'),
    trackIndex: await rows('SELECT * FROM track_index ORDER BY global_position'),
  };
}
