import { expect } from 'chai';
import { StreamHeads } from '../src/eventstore/stream-heads.js';

describe('StreamHeads (unit)', () => {
  it('remembers the highest position reported for a stream, whatever the order', () => {
    const heads = new StreamHeads(10);
    expect(heads.get('s')).to.equal(null);
    heads.record('s', 4);
    heads.record('s', 2);
    expect(heads.get('s')).to.equal(4);
    heads.record('s', 7);
    expect(heads.get('s')).to.equal(7);
  });

  it('keeps the most recently written streams, at least half its capacity, and forgets on request', () => {
    const heads = new StreamHeads(4);
    heads.record('a', 0);
    heads.record('b', 0);
    heads.record('a', 1);
    heads.record('c', 0);
    heads.record('d', 0);
    // The two most recently written (d, c) are always kept; a, written before them, too here.
    expect([heads.get('a'), heads.get('c'), heads.get('d')]).to.deep.equal([1, 0, 0]);
    expect(heads.get('b')).to.equal(null);
    expect(heads.size).to.be.at.most(4);
    heads.forget(['a', 'x']);
    expect([heads.get('a'), heads.get('c'), heads.get('d')]).to.deep.equal([null, 0, 0]);
  });

  it('holds at most its capacity, and always the half of it most recently written', () => {
    const heads = new StreamHeads(800);
    for (let i = 0; i < 10_000; i += 1) {
      heads.record(`s${i}`, i);
      expect(heads.size, `after ${i + 1} streams`).to.be.at.most(800);
      for (const recent of [i, i - 399]) if (recent >= 0) expect(heads.get(`s${recent}`), `s${recent} after s${i}`).to.equal(recent);
    }
    expect(heads.get('s0')).to.equal(null);
    // Writing an old stream again makes it recent: it outlives streams written before it.
    heads.record('s9650', 9_651);
    for (let i = 10_000; i < 10_399; i += 1) heads.record(`s${i}`, i);
    expect(heads.get('s9650')).to.equal(9_651);
  });
});
