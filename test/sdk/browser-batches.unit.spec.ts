import { expect } from 'chai';
import { cutBatches, fitsOneBatch, maxBatchBytes, maxBatchItems, utf8Length, type QueuedItem } from '@tracking-ingestion/sdk/browser/internals';

const t = Date.parse('2026-01-05T10:00:00Z');
let keys = 0;
const keyOf = (): string => `key-${(keys += 1)}`;

describe('browser SDK batches (unit)', () => {
  beforeEach(() => (keys = 0));

  it('measure UTF-8 bytes, as sent', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'a€😀é', '\u07ff\u0800']) expect(utf8Length(text), text).to.equal(Buffer.byteLength(text));
  });

  it('are consecutive items of one kind, in order, each a JSON array with its key and the time of its oldest item', () => {
    const items: QueuedItem[] = [
      { k: 'users', t, j: '{"u":1}' },
      { k: 'events', t: t + 1, j: '{"e":1}' },
      { k: 'events', t: t + 2, j: '{"e":2}' },
      { k: 'users', t: t + 3, j: '{"u":2}' },
    ];
    expect(cutBatches(items, keyOf)).to.deep.equal([
      { k: 'users', id: 'key-1', t, n: 1, b: '[{"u":1}]' },
      { k: 'events', id: 'key-2', t: t + 1, n: 2, b: '[{"e":1},{"e":2}]' },
      { k: 'users', id: 'key-3', t: t + 3, n: 1, b: '[{"u":2}]' },
    ]);
    expect(cutBatches([], keyOf)).to.deep.equal([]);
  });

  it('hold at most 100 items', () => {
    const items = Array.from({ length: 250 }, (_, index): QueuedItem => ({ k: 'events', t, j: `{"n":${index}}` }));
    const batches = cutBatches(items, keyOf);
    expect(batches.map((batch) => batch.n)).to.deep.equal([maxBatchItems, maxBatchItems, 50]);
    expect(batches.flatMap((batch) => JSON.parse(batch.b) as unknown[])).to.have.length(250);
  });

  it('hold at most 60 KiB of body, counted in UTF-8', () => {
    const item = (fill: string): QueuedItem => ({ k: 'events', t, j: JSON.stringify({ s: fill }) });
    const big = '€'.repeat(6_000); // 18,000 bytes, 6,000 characters
    const batches = cutBatches([item(big), item(big), item(big), item(big)], keyOf);
    expect(batches.map((batch) => batch.n)).to.deep.equal([3, 1]);
    for (const batch of batches) expect(Buffer.byteLength(batch.b)).to.be.at.most(maxBatchBytes);
    const exact = 'x'.repeat(maxBatchBytes - 2 - '{"s":""}'.length);
    expect(fitsOneBatch(JSON.stringify({ s: exact }))).to.equal(true);
    expect(fitsOneBatch(JSON.stringify({ s: `${exact}x` }))).to.equal(false);
    expect(Buffer.byteLength(cutBatches([item(exact)], keyOf)[0]?.b ?? '')).to.equal(maxBatchBytes);
  });
});
