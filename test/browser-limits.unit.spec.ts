import { expect } from 'chai';
import { AddressWindows, addressGroup, maxCountedAddresses } from '../src/http/browser-limits.js';

/** The per-address limit of browser keys (src/http/browser-limits.ts): its windows and its bound. */
describe('browser key limits per address (unit)', () => {
  it('counts an IPv6 visitor by its /64 and an IPv4-mapped one by its IPv4 address', () => {
    expect(addressGroup('2001:db8:1:2:aaaa::1')).to.equal('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:2:ffff:ffff:ffff:ffff')).to.equal('2001:db8:1:2::/64');
    expect(addressGroup('2001:0DB8:0001:0002::9')).to.equal('2001:db8:1:2::/64');
    expect(addressGroup('::1')).to.equal('0:0:0:0::/64');
    expect(addressGroup('::ffff:192.0.2.7')).to.equal('192.0.2.7');
    expect(addressGroup('192.0.2.7')).to.equal('192.0.2.7');
  });

  it("refuses an address past its limit until a minute after its first request, and counts each address apart", () => {
    const windows = new AddressWindows(3);
    const t0 = 1_000_000;
    expect([windows.take('a', t0), windows.take('a', t0 + 1), windows.take('a', t0 + 2)]).to.deep.equal([null, null, null]);
    expect(windows.take('a', t0 + 1_000)).to.equal(59);
    expect(windows.take('b', t0 + 1_000), 'another address').to.equal(null);
    expect(windows.take('a', t0 + 59_999)).to.equal(1);
    expect(windows.take('a', t0 + 60_000), 'a new window').to.equal(null);
  });

  it(`holds at most ${maxCountedAddresses.toLocaleString('en-US')} addresses, making room from ended windows`, () => {
    const windows = new AddressWindows(1);
    const t0 = 5_000_000;
    for (let i = 0; i < maxCountedAddresses; i++) windows.take(`flood-${i}`, t0);
    // Full: a new address is not counted (so never refused here), a known one still is.
    expect([windows.take('visitor', t0 + 10), windows.take('visitor', t0 + 11)]).to.deep.equal([null, null]);
    expect(windows.take('flood-1', t0 + 12)).to.be.a('number');
    // Once the flood's windows have ended, a sweep makes room and the new address is counted.
    expect(windows.take('visitor', t0 + 60_000)).to.equal(null);
    expect(windows.take('visitor', t0 + 60_001)).to.be.a('number');
  });
});
