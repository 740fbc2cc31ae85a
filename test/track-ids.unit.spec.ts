import { expect } from 'chai';
import { validate, version } from 'uuid';
import { derivedEventId, uuidV7 } from '../src/ingest/track-ids.js';

describe('trackIDs: UUIDv7 from pooled random bytes (unit)', () => {
  it('makes valid version 7 ids carrying the millisecond', () => {
    const now = Date.now();
    const id = uuidV7(now);
    expect(validate(id)).to.equal(true);
    expect(version(id)).to.equal(7);
    expect(['8', '9', 'a', 'b']).to.include(id[19]);
    expect(parseInt(id.replace(/-/g, '').slice(0, 12), 16)).to.be.at.least(now);
  });

  it('keeps ids strictly increasing and unique across many pool refills, within one millisecond and when the clock goes back', () => {
    const ids: string[] = [];
    const now = Date.now() + 1_000;
    for (let i = 0; i < 5_000; i += 1) ids.push(uuidV7(now));
    for (let i = 0; i < 1_000; i += 1) ids.push(uuidV7(now - 500));
    for (let i = 0; i < 1_000; i += 1) ids.push(uuidV7());
    for (let i = 1; i < ids.length; i += 1) expect((ids[i - 1] as string) < (ids[i] as string), `${ids[i - 1]} < ${ids[i]}`).to.equal(true);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it('differs in its random part from one id to the next', () => {
    const now = Date.now() + 5_000;
    const tails = new Set(Array.from({ length: 600 }, () => uuidV7(now).slice(-12)));
    expect(tails.size).to.equal(600);
  });
});

const hexBytes = (id: string): number[] => (id.replace(/-/g, '').match(/../g) ?? []).map((pair) => parseInt(pair, 16));
const millisecondOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);
/** The 31-bit sequence of a UUIDv7 (docs of uuid v7: after the version nibble, around the variant bits). */
function sequenceOf(id: string): number {
  const b = hexBytes(id) as [number, number, number, number, number, number, number, number, number, number, number];
  return (((b[6] & 0x0f) << 28) | (b[7] << 20) | ((b[8] & 0x3f) << 14) | (b[9] << 6) | (b[10] >>> 2)) >>> 0;
}
/** Later than any millisecond an earlier test of this process gave (ids of one process only increase). */
let later = Date.now() + 60_000;
const aLaterMillisecond = (): number => (later = Math.max(later + 1, Date.now() + 60_000));

describe('trackIDs: milliseconds and sequence (unit)', () => {
  it('carries exactly the millisecond it is made at, and counts the sequence up by one within it', () => {
    const now = aLaterMillisecond();
    const first = uuidV7(now);
    const second = uuidV7(now);
    expect(millisecondOf(first)).to.equal(now);
    expect(millisecondOf(second)).to.equal(now);
    expect(sequenceOf(second)).to.equal(sequenceOf(first) + 1);
  });

  it('starts each new millisecond at a random sequence, all of its 31 bits varying', () => {
    const sequences = Array.from({ length: 300 }, () => sequenceOf(uuidV7(aLaterMillisecond())));
    for (const shift of [24, 16, 8, 0]) {
      expect(new Set(sequences.map((seq) => (seq >>> shift) & 0xff)).size, `bits ${shift}..${shift + 7}`).to.be.above(10);
    }
    expect(Math.max(...sequences)).to.be.below(2 ** 31);
  });
});

describe('derived event ids (unit)', () => {
  it('are UUIDv5 of the trackID and the purpose: the same for the same two, different for another', () => {
    const trackId = uuidV7();
    const id = derivedEventId(trackId, 'ProfilesMerged\nanon-1');
    expect(validate(id)).to.equal(true);
    expect(version(id)).to.equal(5);
    expect(derivedEventId(trackId, 'ProfilesMerged\nanon-1')).to.equal(id);
    expect(derivedEventId(trackId, 'ProfilesMerged\nanon-2')).to.not.equal(id);
    expect(derivedEventId(uuidV7(), 'ProfilesMerged\nanon-1')).to.not.equal(id);
  });
});
