import { expect } from 'chai';
import { dateTimeProblem, earliestInstant, latestInstant, looksLikeDateTime, toUtcInstant } from '../src/ingest/timestamps.js';

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
    '2024-00-10T00:00:00',
    '2024-05-00T00:00:00',
    '2024-12-32T00:00:00',
    '2024-05-01T12:30:60',
    '2024-05-01T12:30:00-0060',
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

  describe('the range of instants (0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z in UTC)', () => {
    const edges: [string, string][] = [
      ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
      ['0001-01-01T00:00:00', '0001-01-01T00:00:00.000Z'],
      ['0001-01-01T23:59:00+2359', '0001-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59.999999Z'],
      ['9999-12-31T23:59:59.9999999Z', '9999-12-31T23:59:59.999999Z'],
      ['9999-12-31T00:00:59.999999-2359', '9999-12-31T23:59:59.999999Z'],
    ];
    for (const [input, instant] of edges) {
      it(`accepts ${input}, at an end of the range`, () => {
        expect(toUtcInstant(input)).to.equal(instant);
        expect(dateTimeProblem(input)).to.equal(null);
      });
    }

    const beyond = [
      '0000-12-31T23:59:59.999999Z',
      '0000-01-01T00:00:00Z',
      '0001-01-01T00:59:59.999999+0100',
      '0001-01-01T23:58:59+2359',
      '9999-12-31T23:00:00-0100',
      '9999-12-31T00:01:00-2359',
      '9999-12-31T23:59:59-2359',
    ];
    for (const input of beyond) {
      it(`refuses ${input}, beyond the range, saying so`, () => {
        expect(toUtcInstant(input)).to.equal(null);
        expect(dateTimeProblem(input)).to.equal(`must be an ISO 8601 date-time from ${earliestInstant} to ${latestInstant} once read as UTC`);
      });
    }

    it('says a date that does not exist is not a date-time, whatever its year', () => {
      expect(dateTimeProblem('0000-02-30T00:00:00Z')).to.match(/^must be an ISO 8601 date-time such as /);
      expect(dateTimeProblem('9999-13-01T00:00:00Z')).to.match(/^must be an ISO 8601 date-time such as /);
    });
  });
});
