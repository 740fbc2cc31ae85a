import { expect } from 'chai';
import { createTrackerWith, shapeProblem, siteLimits, StorageArea, type AreaData, type TrackerOptions } from '@tracking-ingestion/sdk/browser/internals';
import { FakeLocks, FakePage, MemoryStorage, settle } from './browser-fakes.js';

/** The browser SDK at its edges: items the service would refuse whole, a full storage, opt-out from another tab. */

const options: TrackerOptions = { baseUrl: 'https://track.example/', licenseCode: 'L1', browserKey: 'tbk_key' };

/** localStorage whose writes fail, as a full quota makes them. */
class FullStorage extends MemoryStorage {
  full = false;
  override setItem(key: string, value: string): void {
    if (this.full) throw new Error('QuotaExceededError');
    super.setItem(key, value);
  }
}

const nested = (depth: number): unknown => (depth === 0 ? 1 : { a: nested(depth - 1) });

describe('browser SDK at its edges (unit)', () => {
  it('tells an item the service would refuse whole: too deep, too many values or containers', () => {
    expect(shapeProblem({ eventName: 'ok', eventData: { a: [1, 2, { b: 'c' }] } })).to.equal(null);
    expect(shapeProblem(nested(63))).to.equal(null);
    expect(shapeProblem(nested(65))).to.equal('nested deeper than 64 levels');
    expect(shapeProblem({ eventData: Array.from({ length: 10_000 }, () => 1) })).to.equal('10003 JSON values, more than 10,000');
    expect(shapeProblem({ eventData: Array.from({ length: 1_000 }, () => []) })).to.equal('1002 objects and arrays, more than 1,000');
  });

  it('keeps such an item out of every batch, so that the good items of its batch are sent', async () => {
    const page = new FakePage('https://shop.example.com/');
    const errors: string[] = [];
    const tracker = createTrackerWith({ ...options, onError: (message) => errors.push(message) }, page.globals);
    tracker.track({ eventName: 'good' });
    tracker.track({ eventName: 'deep', eventData: nested(70) as Record<string, unknown> });
    tracker.track({ eventName: 'also good' });
    await tracker.flush();
    expect(page.items('events').map((event) => event.eventName)).to.deep.equal(['good', 'also good']);
    expect(errors).to.deep.equal(['events item not sent: nested deeper than 64 levels']);
    expect(tracker.stats().dropped).to.equal(1);
  });

  it('with storage full, leaves no older copy of the area that a later page would send again under new keys', () => {
    const storage = new FullStorage();
    const errors: string[] = [];
    const area = new StorageArea(storage, 'trk_q:L1:tab', () => 1, (message) => errors.push(message));
    area.writable = true;
    area.items = [{ k: 'events', t: 1, j: '{"eventName":"a"}' }];
    expect(area.save()).to.equal(true);
    storage.full = true;
    area.cut(() => 'key-1');
    expect(storage.getItem('trk_q:L1:tab'), 'the copy of loose items is gone').to.equal(null);
    expect(area.batches.map((batch) => batch.id)).to.deep.equal(['key-1']);
    expect(errors).to.have.length(1);
  });

  it("takes over a gone tab's area only once it is written here: with storage full, the area stays, its loose items cut there into batches", () => {
    const storage = new FullStorage();
    const gone: AreaData = { i: [{ k: 'events', t: 1, j: '{"eventName":"loose"}' }], b: [], h: 1 };
    storage.setItem('trk_q:L1:gone', JSON.stringify(gone));
    const area = new StorageArea(storage, 'trk_q:L1:heir', () => 2, () => undefined);
    area.writable = true;
    area.items = [{ k: 'events', t: 2, j: '{"eventName":"mine"}' }];
    area.save();
    // Room for the gone tab's own rewrite, none for the heir's: the takeover is undone.
    let writes = 0;
    const write = storage.setItem.bind(storage);
    storage.setItem = (key: string, value: string) => {
      writes += 1;
      if (key === 'trk_q:L1:heir') throw new Error('QuotaExceededError');
      write(key, value);
    };
    area.takeOver('trk_q:L1:gone', siteLimits, null, () => 'cut-there');
    const left = JSON.parse(storage.getItem('trk_q:L1:gone') ?? 'null') as AreaData;
    expect(left.i).to.deep.equal([]);
    expect(left.b.map((batch) => [batch.id, batch.b])).to.deep.equal([['cut-there', '[{"eventName":"loose"}]']]);
    expect(area.items.map((item) => item.j), 'the heir holds only its own').to.deep.equal(['{"eventName":"mine"}']);
    expect(area.batches).to.deep.equal([]);
    expect(writes).to.equal(2);
  });

  it('stops and clears in a tab when another tab of the site opted the visitor out', async () => {
    const page = new FakePage('https://shop.example.com/');
    const other = new FakePage('https://shop.example.com/other', { document: page.document, storage: page.storage, locks: page.navigator.locks as FakeLocks });
    const first = createTrackerWith(options, page.globals);
    const second = createTrackerWith(options, other.globals);
    await first.flush();
    page.navigator.onLine = false;
    first.track({ eventName: 'held' });
    second.optOut();
    page.navigator.onLine = true;
    await first.flush();
    await settle();
    expect(page.items('events').map((event) => event.eventName)).to.deep.equal([]);
    expect([...page.storage.entries.keys()].filter((key) => key.startsWith('trk_')), 'nothing written back').to.deep.equal([]);
    expect(first.anonymousId).to.equal(undefined);
  });
});
