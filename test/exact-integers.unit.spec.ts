import { expect } from 'chai';
import { InexactInteger, mayHoldInexactInteger, parseMarkingInexactIntegers, reviverSeesSource } from '../src/ingest/exact-integers.js';

/** Byte by byte: the plain reading of "a run of 16 ASCII digits". */
function referenceScan(body: Uint8Array): boolean {
  let run = 0;
  for (const byte of body) {
    run = byte >= 0x30 && byte <= 0x39 ? run + 1 : 0;
    if (run === 16) return true;
  }
  return false;
}

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8');

describe('the scan for integer literals a double may round (unit)', () => {
  it('finds a run of 16 digits wherever it lies, and not a run of 15', () => {
    for (const [text, expected] of [
      ['', false],
      ['123456789012345', false],
      ['1234567890123456', true],
      ['{"n":9007199254740993}', true],
      ['{"n":900719925474099}', false],
      ['{"a":123456789012345,"b":1234567890123456}', true],
      ['x1234567890123456', true],
      ['123456789012345x123456789012345', false],
      ['{"v":1.2345678901234567}', true],
      ['/:0123456789012345:/', true],
    ] as const) {
      expect(mayHoldInexactInteger(bytes(text)), text).to.equal(expected);
    }
  });

  it('agrees with a byte-by-byte scan on 20,000 random bodies of digits and other bytes', () => {
    for (let i = 0; i < 20_000; i += 1) {
      const length = Math.floor(Math.random() * 80);
      const digitShare = Math.random();
      const body = Uint8Array.from({ length }, () => (Math.random() < digitShare ? 0x30 + Math.floor(Math.random() * 10) : pickOther()));
      expect(mayHoldInexactInteger(body), Buffer.from(body).toString('latin1')).to.equal(referenceScan(body));
    }
  });
});

function pickOther(): number {
  const others = [0x2f, 0x3a, 0x2c, 0x22, 0x2e, 0x20, 0x41, 0xff, 0x00];
  return others[Math.floor(Math.random() * others.length)] as number;
}

describe('parsing a body with long numbers (unit)', () => {
  it('runs on a Node.js whose JSON.parse gives the reviver the source text (the service refuses to start without it)', () => {
    expect(reviverSeesSource).to.equal(true);
    expect(parseMarkingInexactIntegers('{"n":9007199254740993}')).to.have.property('n').that.is.an.instanceOf(InexactInteger);
  });

  it('keeps ordinary values and numbers written as doubles as JSON.parse does', () => {
    const text = '{"a":1,"b":-2147483648,"c":9007199254740991,"d":1e20,"e":6.02214076e23,"f":0.1,"g":"9007199254740993","h":[true,null,{"i":1.5e300}]}';
    expect(parseMarkingInexactIntegers(text)).to.deep.equal(JSON.parse(text));
  });

  it('writes a refused integer as the digits sent, not rounded, for the body hash of an Idempotency-Key', () => {
    expect(JSON.stringify({ n: new InexactInteger('9007199254740993') })).to.equal('{"n":"9007199254740993"}');
    expect(JSON.stringify([new InexactInteger('-12345678901234567890')])).to.equal('["-12345678901234567890"]');
  });
});
