import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { matchingIndex, tokenMatches } from '../src/token-hash.js';

describe('token hashes: constant-time comparison (unit)', () => {
  it('compares the presented hash with every stored hash, whichever matches', () => {
    const hash = (text: string) => createHash('sha256').update(text).digest();
    const stored = ['a', 'b', 'c', 'd'].map(hash);
    for (const [presented, expected] of [['a', 0], ['c', 2], ['d', 3], ['z', -1]] as const) {
      const compared: number[] = [];
      const index = matchingIndex(hash(presented), stored, (x, y) => {
        compared.push(stored.findIndex((s) => s === y));
        return x.equals(y);
      });
      expect(index).to.equal(expected);
      expect(compared, presented).to.deep.equal([0, 1, 2, 3]);
    }
    expect(matchingIndex(hash('a'), [Buffer.from('short'), hash('a')])).to.equal(1);
    expect(matchingIndex(hash('a'), [])).to.equal(-1);
  });

  it('matches a presented secret with its stored hash only', () => {
    const stored = createHash('sha256').update('trk_secret').digest();
    expect(tokenMatches('trk_secret', stored)).to.equal(true);
    expect(tokenMatches('trk_secreT', stored)).to.equal(false);
    expect(tokenMatches('trk_secret', stored.subarray(0, 16))).to.equal(false);
  });
});
