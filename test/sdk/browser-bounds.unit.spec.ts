import { expect } from 'chai';
import { limitsLeft, siteLimits, StorageArea, unitsToDrop, type HeldUnit, type QueuedItem } from '@tracking-ingestion/sdk/browser/internals';
import { MemoryStorage } from './browser-fakes.js';

const now = Date.parse('2026-01-05T10:00:00Z');
const day = 24 * 3600_000;
const limits = { maxItems: 5, maxBytes: 1_000, maxAgeMs: 7 * day };
const unit = (t: number, n = 1, size = 10): HeldUnit => ({ t, n, size });

describe('browser SDK queue bounds (unit)', () => {
  it('are 500 items, 1 MB and 7 days per site', () => {
    expect(siteLimits).to.deep.equal({ maxItems: 500, maxBytes: 1_000_000, maxAgeMs: 7 * day });
  });

  it('keep everything within the limits', () => {
    expect(unitsToDrop([unit(now - 1), unit(now - 2), unit(now)], limits, now)).to.deep.equal([]);
    expect(unitsToDrop([], limits, now)).to.deep.equal([]);
  });

  it('drop past the count, oldest first, wherever they stand', () => {
    const units = [unit(now - 10), unit(now - 60), unit(now - 50), unit(now - 40), unit(now - 30), unit(now - 20), unit(now)];
    expect(unitsToDrop(units, limits, now)).to.deep.equal([1, 2]);
  });

  it('count the items of a batch, dropped whole', () => {
    expect(unitsToDrop([unit(now - 9, 4), unit(now - 5), unit(now - 1), unit(now)], limits, now)).to.deep.equal([0]);
  });

  it('drop past the bytes, oldest first', () => {
    expect(unitsToDrop([unit(now - 3, 1, 400), unit(now - 2, 1, 400), unit(now - 1, 1, 400)], limits, now)).to.deep.equal([0]);
  });

  it('drop what is older than 7 days, even within the limits', () => {
    expect(unitsToDrop([unit(now - 7 * day - 1), unit(now - 7 * day), unit(now)], limits, now)).to.deep.equal([0]);
  });

  it('always keep the newest unit, even when other tabs hold the whole budget', () => {
    const left = limitsLeft(limits, { items: 5, bytes: 0 });
    expect(left.maxItems).to.equal(0);
    expect(unitsToDrop([unit(now - 2), unit(now - 1), unit(now)], left, now)).to.deep.equal([0, 1]);
  });

  describe('in a storage area', () => {
    const item = (t: number, j = '{"eventName":"e"}'): QueuedItem => ({ k: 'events', t, j });

    it('drop the oldest items as new ones come, count them, and store what is kept', () => {
      const storage = new MemoryStorage();
      const area = new StorageArea(storage, 'trk_q:L:a', () => now, () => undefined);
      area.writable = true;
      for (let index = 0; index < 8; index += 1) area.add(item(now - 100 + index, `{"n":${index}}`), limits, null);
      expect(area.items.map((held) => held.j)).to.deep.equal(['{"n":3}', '{"n":4}', '{"n":5}', '{"n":6}', '{"n":7}']);
      expect(area.dropped).to.equal(3);
      const stored = JSON.parse(storage.getItem('trk_q:L:a') ?? '{}') as { i: QueuedItem[] };
      expect(stored.i.map((held) => held.j)).to.deep.equal(area.items.map((held) => held.j));
    });

    it('drop a whole batch, the oldest, but never the batch in flight', () => {
      const area = new StorageArea(new MemoryStorage(), 'trk_q:L:a', () => now, () => undefined);
      area.add(item(now - 50), limits, null);
      area.add(item(now - 40), limits, null);
      area.cut(() => 'key-1');
      area.add(item(now - 30), limits, null);
      area.add(item(now - 20), limits, null);
      area.cut(() => 'key-2');
      const inFlight = area.batches[0] ?? null;
      area.add(item(now - 10), limits, inFlight);
      expect(area.count).to.equal(5);
      area.add(item(now - 5), limits, inFlight);
      expect(area.batches.map((batch) => batch.id), 'the in-flight batch stays and counts; the next oldest goes').to.deep.equal(['key-1']);
      expect(area.items).to.have.length(2);
      expect(area.dropped).to.equal(2);
    });

    it('drop items older than 7 days', () => {
      const area = new StorageArea(new MemoryStorage(), 'trk_q:L:a', () => now, () => undefined);
      area.add(item(now - 8 * day), limits, null);
      area.add(item(now), limits, null);
      expect(area.items).to.have.length(1);
      expect(area.dropped).to.equal(1);
    });
  });
});
