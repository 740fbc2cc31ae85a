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

  it('keeps the most recently written streams up to its capacity, and forgets on request', () => {
    const heads = new StreamHeads(2);
    heads.record('a', 0);
    heads.record('b', 0);
    heads.record('a', 1);
    heads.record('c', 0);
    expect([heads.get('a'), heads.get('b'), heads.get('c')]).to.deep.equal([1, null, 0]);
    expect(heads.size).to.equal(2);
    heads.forget(['a', 'x']);
    expect([heads.get('a'), heads.get('c')]).to.deep.equal([null, 0]);
  });
});
