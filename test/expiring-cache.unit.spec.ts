import { expect } from 'chai';
import { ExpiringCache } from '../src/expiring-cache.js';
import { sleep } from './support/eventually.js';

describe('ExpiringCache (unit)', () => {
  it('holds an entry for its time, or the time it was set with, then forgets it', async () => {
    const cache = new ExpiringCache<string, string>(40, 10);
    cache.set('short', 'a');
    cache.set('long', 'b', 10_000);
    expect([cache.get('short'), cache.get('long')]).to.deep.equal(['a', 'b']);
    await sleep(80);
    expect([cache.get('short'), cache.get('long')]).to.deep.equal([undefined, 'b']);
  });

  it('holds at most its number of entries, dropping the least recently used, however many pass through it', () => {
    const cache = new ExpiringCache<number, number>(60_000, 1_000);
    for (let i = 0; i < 200_000; i += 1) cache.set(i, i);
    expect(cache.get(198_999)).to.equal(undefined);
    expect(cache.get(199_000)).to.equal(199_000);
    expect(cache.get(199_999)).to.equal(199_999);
  });

  it('deletes an entry only while it still holds the value given', () => {
    const cache = new ExpiringCache<string, object>(60_000, 10);
    const first = {};
    const second = {};
    cache.set('k', first);
    cache.set('k', second);
    cache.delete('k', first);
    expect(cache.get('k')).to.equal(second);
    cache.delete('k', second);
    expect(cache.get('k')).to.equal(undefined);
  });
});
