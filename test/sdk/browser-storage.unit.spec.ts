import { expect } from 'chai';
import { Delivery, errorText, resultsOf, retriable, type AreaData, type DeliveryEnv } from '@tracking-ingestion/sdk/browser/internals';
import { deliveryEnv, FakeClock, FakeLocks, FakeService, MemoryStorage, settle, type FakeReply } from './browser-fakes.js';

const prefix = 'trk_q:L1:';
const url = (kind: string, key: string): string => `https://track.example/v1/accounts/L1/${kind}/bulk?key=tbk_x&idempotencyKey=${key}`;

/** The areas stored, by key. */
function areas(stored: Map<string, string>): Map<string, AreaData> {
  return new Map([...stored].filter(([key]) => key.startsWith(prefix)).map(([key, value]) => [key, JSON.parse(value) as AreaData]));
}

describe('browser SDK storage areas and delivery (unit)', () => {
  let storage: MemoryStorage;
  let locks: FakeLocks;
  let clock: FakeClock;
  let service: FakeService;
  let errors: string[];
  let env: DeliveryEnv;
  const tabs: Delivery[] = [];

  /** A tab started on the shared storage and locks, its lock granted. */
  async function openTab(overrides: Partial<DeliveryEnv> = {}): Promise<Delivery> {
    const tab = new Delivery({ ...env, ...overrides }, prefix, url);
    tabs.push(tab);
    tab.start();
    await settle();
    return tab;
  }

  beforeEach(() => {
    storage = new MemoryStorage();
    locks = new FakeLocks();
    clock = new FakeClock();
    service = new FakeService(storage);
    errors = [];
    env = deliveryEnv(storage, locks, clock, service, errors);
  });

  afterEach(() => {
    for (const tab of tabs.splice(0)) tab.stop();
  });

  it('writes each item to the area of its tab when it is queued, once the tab holds the area lock', async () => {
    const tab = new Delivery(env, prefix, url);
    tabs.push(tab);
    tab.start();
    tab.enqueue('events', '{"eventName":"early"}');
    expect(areas(storage.entries).size, 'nothing written before the lock is granted').to.equal(0);
    await settle();
    expect(locks.held.has(tab.area.key)).to.equal(true);
    tab.enqueue('events', '{"eventName":"later"}');
    const stored = areas(storage.entries).get(tab.area.key);
    expect(stored?.i.map((item) => item.j)).to.deep.equal(['{"eventName":"early"}', '{"eventName":"later"}']);
    expect(stored?.i.map((item) => item.t)).to.deep.equal([clock.now, clock.now]);
    expect(tab.area.key.startsWith(prefix)).to.equal(true);
  });

  it('writes a batch with its Idempotency-Key before it sends it, and removes it once answered', async () => {
    const tab = await openTab();
    tab.enqueue('users', '{"anonymousId":"a"}');
    tab.enqueue('events', '{"eventName":"one"}');
    tab.enqueue('events', '{"eventName":"two"}');
    await tab.flush();
    expect(service.sent.map((request) => request.body)).to.deep.equal(['[{"anonymousId":"a"}]', '[{"eventName":"one"},{"eventName":"two"}]']);
    expect(service.sent.map((request) => request.keepalive)).to.deep.equal([false, false]);
    const [first, second] = service.sent;
    const storedAtFirst = areas(first?.stored ?? new Map()).get(tab.area.key);
    expect(storedAtFirst?.b.map((batch) => [batch.id, batch.b])).to.deep.equal([
      [service.keys()[0], first?.body],
      [service.keys()[1], second?.body],
    ]);
    expect(first?.url).to.equal(url('users', service.keys()[0] ?? ''));
    expect(areas(second?.stored ?? new Map()).get(tab.area.key)?.b, 'the answered batch left').to.have.length(1);
    expect(areas(storage.entries).size, 'an empty area leaves storage').to.equal(0);
    expect(tab.stats()).to.deep.include({ queued: 0, sent: 3, failed: 0, dropped: 0 });
  });

  it('sends one batch at a time, in order', async () => {
    const gates: (() => void)[] = [];
    const answered = service.fetch;
    const tab = await openTab({
      fetch: async (...request) => {
        await new Promise<void>((resolve) => gates.push(resolve));
        return answered(...request);
      },
    });
    for (let index = 0; index < 150; index += 1) tab.enqueue('events', `{"n":${index}}`);
    const flushed = tab.flush();
    await settle();
    expect(gates, 'one request open').to.have.length(1);
    gates.shift()?.();
    await settle();
    expect(gates, 'the next once the first is answered').to.have.length(1);
    gates.shift()?.();
    await flushed;
    expect(service.sent.map((request) => (JSON.parse(request.body) as { n: number }[]).map((item) => item.n))).to.deep.equal([
      Array.from({ length: 100 }, (_, index) => index),
      Array.from({ length: 50 }, (_, index) => index + 100),
    ]);
  });

  it('keeps a batch through failures and sends it again with the same key and body, after a backoff', async () => {
    const tab = await openTab();
    const replies: (FakeReply | null)[] = [{ status: 503, body: { error: 'down' } }, null, { status: 401, body: { error: 'unknown key' } }];
    service.reply = () => (replies.length > 0 ? (replies.shift() as FakeReply | null) : { status: 200, body: { response: [{ status: 'queued', trackID: 't' }] } });
    tab.enqueue('events', '{"eventName":"one"}');
    const flushed = tab.flush();
    await settle();
    expect(service.sent).to.have.length(1);
    expect(areas(storage.entries).get(tab.area.key)?.b[0]?.id).to.equal(service.keys()[0]);
    await clock.advance(999);
    expect(service.sent, 'the first retry waits 1 s (no jitter drawn)').to.have.length(1);
    await clock.advance(1);
    expect(service.sent).to.have.length(2);
    await clock.advance(2_000);
    expect(service.sent).to.have.length(3);
    await clock.advance(4_000);
    await flushed;
    expect(new Set(service.keys()).size).to.equal(1);
    expect(new Set(service.sent.map((request) => request.body)).size).to.equal(1);
    expect(tab.stats()).to.deep.include({ sent: 1, retried: 3, queued: 0 });
    expect(errors, 'an HTTP refusal is said once per failing streak').to.deep.equal(['events batch not accepted, sent again later: HTTP 503: down']);
  });

  it("waits at least a reply's Retry-After", async () => {
    const tab = await openTab();
    const replies: FakeReply[] = [{ status: 429, retryAfter: '30', body: { error: 'slow down' } }];
    service.reply = () => replies.shift() ?? { status: 200, body: { response: [{ status: 'queued', trackID: 't' }] } };
    tab.enqueue('events', '{"eventName":"one"}');
    void tab.flush();
    await settle();
    await clock.advance(29_999);
    expect(service.sent).to.have.length(1);
    await clock.advance(1);
    expect(service.sent).to.have.length(2);
  });

  it('drops a batch refused for good (400, 413, 422), counting and reporting it', async () => {
    const tab = await openTab();
    const statuses = [400, 413, 422];
    service.reply = () => ({ status: statuses.shift() ?? 500, body: { error: 'refused' } });
    tab.enqueue('events', '{"eventName":"a"}');
    await tab.flush();
    tab.enqueue('products', '{"productId":"p"}');
    await tab.flush();
    tab.enqueue('users', '{"anonymousId":"x"}');
    await tab.flush();
    expect(service.sent).to.have.length(3);
    expect(tab.stats()).to.deep.include({ failed: 3, queued: 0, retried: 0 });
    expect(errors).to.deep.equal(['events batch refused: HTTP 400: refused', 'products batch refused: HTTP 413: refused', 'users batch refused: HTTP 422: refused']);
  });

  it("reports the service's refusal of single items of a stored batch", async () => {
    const tab = await openTab();
    service.reply = () => ({ status: 200, body: { response: [{ status: 'queued', trackID: 't' }, { status: 'error', message: 'eventName is required' }] } });
    tab.enqueue('events', '{"eventName":"a"}');
    tab.enqueue('events', '{}');
    await tab.flush();
    expect(tab.stats()).to.deep.include({ sent: 1, failed: 1 });
    expect(errors).to.deep.equal(['events item refused: eventName is required']);
  });

  it('sends nothing offline, and sends when back online', async () => {
    let online = false;
    const tab = await openTab({ online: () => online });
    tab.enqueue('events', '{"eventName":"a"}');
    const flushed = tab.flush();
    await settle();
    expect(service.sent).to.have.length(0);
    online = true;
    tab.online();
    await flushed;
    expect(service.sent).to.have.length(1);
  });

  it('takes over the area of a gone tab: its batches keep their keys, its items come along', async () => {
    service.reply = () => null; // the first tab never gets a reply
    const gone = await openTab();
    gone.enqueue('events', '{"eventName":"batched"}');
    void gone.flush();
    await settle();
    gone.enqueue('events', '{"eventName":"loose"}');
    const [batch] = gone.area.batches;
    const goneKey = gone.area.key;
    gone.stop(); // the tab closes: its lock is free, its area stays
    expect(areas(storage.entries).get(goneKey)?.b.map((held) => held.id)).to.deep.equal([batch?.id]);

    service.reply = (body) => ({ status: 200, body: { response: (JSON.parse(body) as unknown[]).map(() => ({ status: 'queued', trackID: 't' })) } });
    const sentBefore = service.sent.length;
    const heir = new Delivery(env, prefix, url);
    tabs.push(heir);
    heir.start();
    await heir.flush(); // asked before its lock is granted: it waits for the lock and the takeover
    expect(areas(storage.entries).has(goneKey), "the gone tab's area is removed").to.equal(false);
    const resent = service.sent.slice(sentBefore);
    expect(resent[0]?.url).to.equal(url('events', batch?.id ?? ''));
    expect(resent[0]?.body).to.equal(batch?.b);
    expect(resent.map((request) => request.body)).to.deep.equal(['[{"eventName":"batched"}]', '[{"eventName":"loose"}]']);
  });

  it('leaves the area of a live tab alone', async () => {
    service.reply = () => null;
    const live = await openTab();
    live.enqueue('events', '{"eventName":"mine"}');
    const other = await openTab();
    await clock.advance(10_000);
    expect(live.area.count).to.equal(1);
    const stored = areas(storage.entries).get(live.area.key);
    expect((stored?.i.length ?? 0) + (stored?.b.length ?? 0)).to.equal(1);
    expect(other.area.count).to.equal(0);
    expect(service.keys().every((key) => key === live.area.batches[0]?.id), 'only the live tab sent it').to.equal(true);
  });

  it('on hide, stores every item in batches, then beacons each; they stay stored and go again, for a reply, when the page shows', async () => {
    const beacons: { url: string; body: string; stored: number }[] = [];
    const tab = await openTab({
      beacon: (beaconUrl, body) => {
        beacons.push({ url: beaconUrl, body, stored: areas(storage.entries).get(tab.area.key)?.b.length ?? 0 });
        return beacons.length === 1; // the second is refused: fetch with keepalive instead
      },
    });
    tab.enqueue('users', '{"anonymousId":"a"}');
    tab.enqueue('events', '{"eventName":"a"}');
    tab.hide();
    expect(beacons.map((beacon) => beacon.stored)).to.deep.equal([2, 2]);
    expect(service.sent.map((request) => [request.body, request.keepalive])).to.deep.equal([['[{"eventName":"a"}]', true]]);
    const stored = areas(storage.entries).get(tab.area.key);
    expect(stored?.b.map((batch) => url(batch.k, batch.id))).to.deep.equal(beacons.map((beacon) => beacon.url));
    await clock.advance(5_000);
    expect(service.sent, 'not sent again while hidden').to.have.length(1);
    tab.show();
    await tab.flush();
    expect(service.sent.slice(1).map((request) => [request.body, request.keepalive])).to.deep.equal([
      ['[{"anonymousId":"a"}]', false],
      ['[{"eventName":"a"}]', false],
    ]);
    expect(new Set(service.keys()).size, 'the same keys: the service replays').to.equal(2);
  });

  it('does not beacon again what a page gone already sent by beacon: a later page fetches it, for a reply', async () => {
    service.reply = () => null;
    const beacons: string[] = [];
    const beacon = (_url: string, body: string): boolean => (beacons.push(body), true);
    const first = await openTab({ beacon });
    first.enqueue('events', '{"eventName":"hop-1"}');
    first.hide();
    first.stop(); // the page is gone
    const second = await openTab({ beacon });
    second.enqueue('events', '{"eventName":"hop-2"}');
    second.hide();
    expect(beacons).to.deep.equal(['[{"eventName":"hop-1"}]', '[{"eventName":"hop-2"}]']);
    expect(service.sent.map((request) => request.body), 'the taken-over batch, fetched').to.deep.equal(['[{"eventName":"hop-1"}]']);
  });

  it('retries on 401, 403, 408, 429, 5xx and no reply; drops on any other refusal', () => {
    expect([0, 200, 401, 403, 408, 429, 500, 502, 503].filter(retriable)).to.deep.equal([0, 200, 401, 403, 408, 429, 500, 502, 503]);
    expect([400, 404, 413, 415, 422].filter(retriable)).to.deep.equal([]);
    expect(resultsOf({ response: [{ status: 'queued', trackID: 't' }] }, 1)).to.have.length(1);
    expect(resultsOf({ response: [] }, 1), 'not one result per item: not a bulk reply').to.equal(null);
    expect(resultsOf('<html>', 1)).to.equal(null);
    expect([errorText({ error: 'a' }), errorText({ response: { message: 'b' } }), errorText(null)]).to.deep.equal(['a', 'b', 'no error text']);
  });
});
