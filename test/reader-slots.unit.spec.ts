import { expect } from 'chai';
import { ReaderSlots } from '../src/export/slots.js';

describe('reader slots of exports and long polls (unit)', () => {
  it('gives an account at most its share and all at most the total, each slot back once released', () => {
    const slots = new ReaderSlots(2, 3);
    const a1 = slots.take('a');
    const a2 = slots.take('a');
    expect([a1 !== null, a2 !== null, slots.take('a')]).to.deep.equal([true, true, null]);
    const b1 = slots.take('b');
    expect([b1 !== null, slots.take('c')]).to.deep.equal([true, null]);
    a1?.();
    a1?.();
    const c1 = slots.take('c');
    expect([c1 !== null, slots.take('a')]).to.deep.equal([true, null]);
    a2?.();
    expect(slots.take('a')).not.to.equal(null);
  });
});
