import { expect } from 'chai';
import type { NewEvent } from '../../src/eventstore/port.js';
import type { LivePage } from '../../projections/track-index/live.js';
import { adminToken, eventStoreUnderTest, servedApp, type Credentials, type TestApp } from '../support/app.js';
import { tracking } from '../support/cli.js';
import { queued } from '../support/replies.js';

const admin = `Bearer ${adminToken}`;

interface AuditedEvent {
  eventId: string;
  streamPosition: number;
  alsoStoredAt?: { stream: string; streamPosition: number; globalPosition: number }[];
  repeatOf?: { streamPosition: number };
}

/**
 * A retry that stores an item's event id a second time: EventStoreDB does when its cache of recent
 * ids no longer holds the id (after an election, a restart or an eviction; the test double, with
 * its deduplication off), Postgres never does. Either way the read models count the item once, and
 * the audit shows it once, with where its later copy is stored.
 */
describe('an event id stored twice (e2e)', () => {
  let app: TestApp;
  let account: Credentials;
  servedApp((started) => ({ app, account } = started), { projections: true });

  const storesRepeats = eventStoreUnderTest === 'esdb';

  /** Appends the stored events of `ids` again, as a store whose deduplication missed them. */
  const storeAgain = async (ids: string[]): Promise<void> => {
    const streams = new Set((await app.events()).filter((e) => ids.includes(e.event_id)).map((e) => e.stream_name));
    const stored = (await Promise.all([...streams].map((s) => app.services.store.readStream(s)))).flat().filter((e) => ids.includes(e.id));
    const double = app.esdbDouble();
    if (double) double.deduplicate = false;
    try {
      const copies: NewEvent[] = stored.map(({ streamPosition: _position, globalPosition: _global, recordedAt: _recorded, ...copy }) => copy);
      for (const copy of copies) await app.services.store.append([copy]);
    } finally {
      if (double) double.deduplicate = true;
    }
  };

  it('leads, lead events, products, live events count it once; the audit (HTTP and CLI) shows it once, marked', async () => {
    const ann = queued(await app.ingest(account, 'users', { userId: 'u-1', firstName: 'Ann', attributes: {} }));
    queued(await app.ingest(account, 'users', { userId: 'u-1', firstName: 'Anna', attributes: {} }));
    const login = queued(await app.ingest(account, 'events', { userId: 'u-1', eventName: 'login' }));
    const red = queued(await app.ingest(account, 'products', { productId: 'p-1', properties: { color: 'red' } }));
    queued(await app.ingest(account, 'products', { productId: 'p-1', properties: { color: 'blue' } }));
    const view = queued(await app.ingest(account, 'productsevents', { productId: 'p-1', userId: 'u-1', eventName: 'view' }));
    await app.projected();

    await storeAgain([ann, login, red, view]);
    expect(await app.events()).to.have.length(storesRepeats ? 10 : 6);
    await app.projected();

    const path = `/admin/v1/accounts/${account.licenseCode}`;
    const lead = await app.get<{ firstName: string }>(`${path}/leads/u-1`, admin);
    expect(lead.body.firstName).to.equal('Anna');
    expect((await app.pool.query('SELECT version FROM leads')).rows).to.deep.equal([{ version: 2 }]);
    const events = await app.get<{ events: { trackID: string }[] }>(`${path}/leads/u-1/events`, admin);
    expect(events.body.events.map((e) => e.trackID)).to.deep.equal([login]);
    expect((await app.pool.query('SELECT properties, version FROM products')).rows).to.deep.equal([{ properties: { color: 'blue' }, version: 2 }]);
    expect((await app.pool.query('SELECT event_name FROM product_events')).rows).to.deep.equal([{ event_name: 'view' }]);
    const live = await app.get<LivePage>(`${path}/live?limit=50`, admin);
    expect(live.body.items).to.have.length(6);

    const audit = await app.get<{ events: AuditedEvent[]; streams: Record<string, AuditedEvent[]> }>(`${path}/track/${ann}`, admin);
    expect(audit.status).to.equal(200);
    expect(audit.body.events.map((e) => [e.eventId, e.streamPosition])).to.deep.equal([[ann, 0]]);
    const stream = Object.values(audit.body.streams)[0] ?? [];
    if (storesRepeats) {
      // Stream of u-1: 0 Ann, 1 Anna, 2 login, 3 Ann again, 4 login again.
      expect(audit.body.events[0]?.alsoStoredAt?.map((c) => c.streamPosition)).to.deep.equal([3]);
      const ofLogin = await app.get<{ events: AuditedEvent[]; streams: Record<string, AuditedEvent[]> }>(`${path}/track/${login}`, admin);
      expect(ofLogin.body.events.map((e) => e.alsoStoredAt?.map((c) => c.streamPosition))).to.deep.equal([[4]]);
    } else {
      expect(audit.body.events[0]).not.to.have.property('alsoStoredAt');
    }
    expect(stream.map((e) => e.eventId)).to.deep.equal([ann]);

    const text = await tracking(app, 'audit', ann);
    expect(text.code, text.stderr).to.equal(0);
    expect(text.stdout).to.contain(`trackID ${ann}: 1 stored event(s)`);
    expect(text.stdout.includes('also stored at'), text.stdout).to.equal(storesRepeats);
  });
});
