import { expect } from 'chai';
import { validate, version } from 'uuid';
import { uuidV7 } from '../src/ingest/track-ids.js';

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
