import { expect } from 'chai';
import type { NewEvent, RecordedEvent } from '../src/eventstore/port.js';
import { adminToken, TestApp, type Credentials, type Reply } from './support/app.js';
import { EsdbTestServer } from '../testing/esdb-test-server.js';
import { allowConnections } from './support/event-stores.js';
import { eventually } from './support/eventually.js';
import { queued, requestError } from './support/replies.js';

/**
 * The service with EVENTSTORE_URL set, on the EventStoreDB test double: what only this adapter has
 * to get right. (The ingestion and projection specs also run whole on it: `.mocharc.esdb.json`.)
 */
describe('on EventStoreDB (e2e)', function () {
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
    await server.restart().catch(() => undefined);
    await app.stop();
    await server.close();
  });

  /** Appends stored events again, as the server may when its deduplication misses them. */
  const storeAgain = async (events: RecordedEvent[]): Promise<void> => {
    server.deduplicate = false;
    const copies: NewEvent[] = events.map(({ streamPosition: _position, globalPosition: _global, recordedAt: _recorded, ...copy }) => copy);
    for (const copy of copies) await app.services.store.append([copy]);
    server.deduplicate = true;
  };

  it('keeps the events in EventStoreDB, not in Postgres', async () => {
    const trackID = queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    const stored = await app.events();
    expect(stored.map((e) => [e.event_id, e.event_type])).to.deep.equal([[trackID, 'UserUpserted']]);
    expect(server.size).to.equal(1);
    const { rows } = await app.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
    expect(rows[0]?.n).to.equal(0);
  });

  it('multiplexes concurrent requests on one gRPC call and answers each after its write', async () => {
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => app.ingest(account, 'events', { userId: `u-${i % 7}`, eventName: 'view' })));
    const trackIDs = replies.map(queued);
    expect(server.calls).to.deep.equal({ batchAppend: 1, append: 0 });
    const stored = new Set((await app.events()).map((e) => e.event_id));
    expect(trackIDs.every((id) => stored.has(id))).to.equal(true);
    expect(stored.size).to.equal(60);
  });

  it('applies an event id stored twice once: versions, latest values and timelines are unchanged', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', firstName: 'Ann', attributes: {} }));
    queued(await app.ingest(account, 'users', { userId: 'u-1', firstName: 'Anna', attributes: {} }));
    queued(await app.ingest(account, 'products', { productId: 'p-1', properties: { v: 1 } }));
    queued(await app.ingest(account, 'products', { productId: 'p-1', properties: { v: 2 } }));
    queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'login' }));
    await app.projected();
    const before = await readModels(app);

    // The oldest events again, after newer ones: applied a second time they would turn the
    // profile and the product back to their first values and count one more version.
    const stored = await app.events();
    const again = stored.filter((e) => ['UserUpserted', 'ProductSubmitted', 'EventTracked'].includes(e.event_type));
    const firsts = [again[0], again[2], again[4]].map((e) => e?.event_id);
    const all = (await Promise.all([...new Set(again.map((e) => e.stream_name))].map((s) => app.services.store.readStream(s)))).flat();
    await storeAgain(all.filter((e) => firsts.includes(e.id)));
    expect(server.size).to.equal(stored.length + 3);
    await app.projected();

    expect(await readModels(app)).to.deep.equal(before);
    const lead = before.leads[0];
    expect(lead).to.deep.include({ first_name: 'Anna', version: 2 });
    expect(before.products[0]).to.deep.include({ version: 2 });
    expect(before.products[0]?.properties).to.deep.equal({ v: 2 });
    expect(before.userEvents).to.have.length(1);
  });

  it('answers healthz 503 while PostgreSQL is unreachable, though EventStoreDB is up', async () => {
    expect((await app.get('/healthz')).status).to.equal(200);
    await allowConnections(app.database, false);
    try {
      requestError(await app.get('/healthz'), 503);
    } finally {
      await allowConnections(app.database, true);
    }
    expect((await app.get('/healthz')).status).to.equal(200);
  });

  it('answers 503 while EventStoreDB is down, healthz included, and projects what comes after it is back', async () => {
    queued(await app.ingest(account, 'users', { userId: 'u-1', attributes: {} }));
    await app.projected();
    await server.stop();
    requestError(await app.ingest(account, 'users', { userId: 'u-2', attributes: {} }), 503);
    requestError(await app.ingest(account, 'users/bulk', [{ userId: 'u-2', attributes: {} }]), 503);
    requestError(await app.ingest(account, 'events', { userId: 'u-2', eventName: 'x' }), 503);
    requestError(await app.get('/healthz'), 503);

    await server.restart();
    // Sent again every 100 ms while it is 503.
    let last: Reply | undefined;
    const reply = await eventually(
      async () => {
        last = await app.ingest(account, 'users', { userId: 'u-3', attributes: {} });
        return last.status !== 503 && last;
      },
      5_000,
      () => `still 503 after the restart: ${JSON.stringify(last?.body)}`,
      100,
    );
    queued(reply);
    expect((await app.get('/healthz')).status).to.equal(200);
    // The workers' subscription was cut with the server: it resumes from its checkpoint.
    let found = 0;
    const lead = await eventually(
      async () => {
        const reply = await app.get<{ userId: string }>(`/admin/v1/accounts/${account.licenseCode}/leads/u-3`, `Bearer ${adminToken}`);
        found = reply.status;
        return reply.status === 200 && reply.body;
      },
      10_000,
      () => `the lead u-3 still answers ${found}`,
    );
    expect(lead.userId).to.equal('u-3');
    const { rows } = await app.pool.query<{ id: string }>('SELECT profile_id AS id FROM leads ORDER BY 1');
    expect(rows.map((r) => r.id)).to.deep.equal(['u-1', 'u-3']);
  });
});

async function readModels(app: TestApp): Promise<{ leads: Record<string, unknown>[]; products: Record<string, unknown>[]; userEvents: Record<string, unknown>[] }> {
  const leads = await app.pool.query('SELECT * FROM leads ORDER BY profile_id');
  const products = await app.pool.query('SELECT * FROM products ORDER BY product_id');
  const userEvents = await app.pool.query('SELECT * FROM user_events ORDER BY event_id');
  return { leads: leads.rows, products: products.rows, userEvents: userEvents.rows };
}
