import { expect } from 'chai';
import { looksLikeDateTime, toUtcInstant } from '../src/ingest/timestamps.js';

describe('ISO date-times (unit)', () => {
  const valid: [string, string][] = [
    ['2024-05-01T12:30:00', '2024-05-01T12:30:00.000Z'],
    ['2024-05-01T12:30:00.123456', '2024-05-01T12:30:00.123456Z'],
    ['2024-05-01T12:30:00.123456+0200', '2024-05-01T10:30:00.123456Z'],
    ['2024-05-01T00:10:00.123456789+0100', '2024-04-30T23:10:00.123456Z'],
    ['2024-05-01T12:30:00-0530', '2024-05-01T18:00:00.000Z'],
    ['2024-05-01T12:30:00+02:00', '2024-05-01T10:30:00.000Z'],
    ['2024-05-01T12:30:00Z', '2024-05-01T12:30:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59.9Z', '2000-02-29T23:59:59.900Z'],
  ];
  for (const [input, instant] of valid) {
    it(`reads ${input} as ${instant}`, () => {
      expect(toUtcInstant(input)).to.equal(instant);
      expect(looksLikeDateTime(input)).to.equal(true);
    });
  }

  const invalid = [
    '2024-05-01T12:30:00+05',
    '2024-05-01 12:30:00',
    '2024-05-01',
    '2024-13-01T00:00:00',
    '2023-02-29T00:00:00',
    '1900-02-29T00:00:00',
    '2024-04-31T00:00:00',
    '2024-05-01T24:00:00',
    '2024-05-01T12:60:00',
    '2024-05-01T12:30:00+2400',
    '2024-05-01T12:30:00z',
    ' 2024-05-01T12:30:00',
  ];
  for (const input of invalid) {
    it(`refuses '${input}'`, () => {
      expect(toUtcInstant(input)).to.equal(null);
    });
  }
});
