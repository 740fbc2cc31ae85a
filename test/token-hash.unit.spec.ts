import { createHash, type timingSafeEqual } from 'node:crypto';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { expect } from 'chai';
import { matchingIndex, tokenMatches } from '../src/accounts/token-hash.js';

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

  it('compares through crypto.timingSafeEqual, once per stored hash, never with === or Buffer#equals', () => {
    // The module object behind node:crypto; syncBuiltinESMExports makes the ES named import of
    // token-hash.ts see a replacement of its property.
    const crypto = createRequire(import.meta.url)('node:crypto') as { timingSafeEqual: typeof timingSafeEqual };
    // The real one, to call and to put back.
    const original = crypto.timingSafeEqual;
    const compared: Array<[string, string]> = [];
    crypto.timingSafeEqual = (a, b) => {
      compared.push([Buffer.from(a as Uint8Array).toString('hex'), Buffer.from(b as Uint8Array).toString('hex')]);
      return original(a, b);
    };
    syncBuiltinESMExports();
    try {
      const hash = (text: string) => createHash('sha256').update(text).digest();
      const hex = (text: string) => hash(text).toString('hex');
      expect(tokenMatches('trk_secret', hash('trk_secret'))).to.equal(true);
      expect(tokenMatches('trk_other', hash('trk_secret'))).to.equal(false);
      expect(compared).to.deep.equal([
        [hex('trk_secret'), hex('trk_secret')],
        [hex('trk_other'), hex('trk_secret')],
      ]);
      compared.length = 0;
      expect(matchingIndex(hash('b'), [hash('a'), hash('b'), hash('c')])).to.equal(1);
      expect(compared).to.deep.equal([hex('a'), hex('b'), hex('c')].map((stored) => [hex('b'), stored]));
    } finally {
      crypto.timingSafeEqual = original;
      syncBuiltinESMExports();
    }
  });
});
