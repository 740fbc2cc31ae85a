import { expect } from 'chai';
import { dateTimeProblem, toUtcInstant } from '../src/ingest/timestamps.js';

/**
 * The reading of date-times as it was first written, with `Date` objects: the arithmetic reading
 * must accept, refuse and convert exactly as it does.
 */
const shape = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;
const daysIn = (year: number, month: number): number => new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0) ? 1 : 0);

function referenceReading(value: string): string | 'form' | 'range' {
  const match = shape.exec(value);
  if (!match) return 'form';
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return 'form';
  if (hour > 23 || minute > 59 || second > 59) return 'form';
  let offsetMinutes = 0;
  if (zone && zone !== 'Z') {
    const digits = zone.replace(':', '');
    const offsetHours = Number(digits.slice(1, 3));
    const offsetMins = Number(digits.slice(3, 5));
    if (offsetHours > 23 || offsetMins > 59) return 'form';
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  if (year < 1) return 'range';
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const utc = new Date(date.getTime() - offsetMinutes * 60_000);
  if (utc.getUTCFullYear() < 1 || utc.getUTCFullYear() > 9999) return 'range';
  return `${utc.toISOString().slice(0, 19)}.${(fraction ?? '').padEnd(3, '0').slice(0, 6)}Z`;
}

function ours(value: string): string | 'form' | 'range' {
  const instant = toUtcInstant(value);
  if (instant !== null) {
    expect(dateTimeProblem(value), value).to.equal(null);
    return instant;
  }
  return (dateTimeProblem(value) ?? '').startsWith('must be an ISO 8601 date-time from') ? 'range' : 'form';
}

const pick = <T>(choices: readonly T[]): T => choices[Math.floor(Math.random() * choices.length)] as T;
const two = (n: number): string => String(n).padStart(2, '0');

describe('ISO date-times: the same readings as with Date objects (unit)', () => {
  it('agrees on edge cases: day and year boundaries, leap days, offsets, out-of-range fields', () => {
    const cases = [
      '2024-05-01T12:30:00.123+02:00', '2024-05-01T00:30:00+02:00', '2024-05-01T23:30:00-02:00', '2024-03-01T00:00:00+0001',
      '2024-02-29T23:59:59-00:01', '2023-02-28T23:59:59-00:01', '2023-03-01T00:00:00+00:01', '2100-02-28T23:00:00-01:00',
      '2000-02-29T23:00:00-01:00', '1900-03-01T00:00:00+01:00', '2024-12-31T23:59:59.999999999-23:59', '2025-01-01T00:00:00+23:59',
      '0001-01-01T00:00:00Z', '0001-01-01T00:00:00+00:01', '0001-01-01T00:00:00-00:01', '0000-12-31T23:59:59-00:01', '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999999Z', '9999-12-31T23:59:59-00:01', '9999-12-31T23:00:00+01:00', '9999-13-01T00:00:00Z',
      '2024-02-30T00:00:00Z', '2023-02-29T00:00:00Z', '2024-04-31T00:00:00Z', '2024-00-10T00:00:00Z', '2024-01-00T00:00:00Z',
      '2024-01-01T24:00:00Z', '2024-01-01T23:60:00Z', '2024-01-01T23:59:60Z', '2024-01-01T00:00:00+24:00', '2024-01-01T00:00:00+00:60',
      '2024-01-01T00:00:00+02', '2024-01-01T00:00:00+0230', '2024-01-01T00:00:00-0230', '2024-01-01T00:00:00', '2024-01-01T00:00:00.1',
      '2024-01-01T00:00:00.', '2024-01-01 00:00:00Z', '2024-01-01T00:00:00z', '2024-01-01T00:00:00+02:0', '2024-01-01T00:00:00.1234567890Z',
      '24-01-01T00:00:00Z', '2024-1-01T00:00:00Z', '', 'T', '2024-01-01T00:00:00Z\n', ' 2024-01-01T00:00:00Z', '2024-01-01T00:00:00−01:00',
      '0099-12-31T23:00:00-01:00', '0100-01-01T00:30:00+01:00', '0004-02-29T23:30:00-00:30', '1970-01-01T00:00:00+00:00',
    ];
    for (const value of cases) expect(ours(value), value).to.equal(referenceReading(value));
  });

  it('agrees on 20,000 random date-times across every field, leap years and offset', () => {
    for (let i = 0; i < 20_000; i += 1) {
      const year = pick([0, 1, 2, 4, 99, 100, 400, 1900, 1970, 2000, 2023, 2024, 2100, 9998, 9999, Math.floor(Math.random() * 10_000)]);
      const value =
        `${String(year).padStart(4, '0')}-${two(Math.floor(Math.random() * 14))}-${two(Math.floor(Math.random() * 33))}` +
        `T${two(Math.floor(Math.random() * 25))}:${two(Math.floor(Math.random() * 61))}:${two(Math.floor(Math.random() * 61))}` +
        pick(['', '.5', '.123', '.1234567', '.999999999']) +
        pick(['', 'Z', `+${two(Math.floor(Math.random() * 25))}:${two(Math.floor(Math.random() * 61))}`, `-${two(Math.floor(Math.random() * 25))}${two(Math.floor(Math.random() * 61))}`, '+00:00', '-00:00']);
      expect(ours(value), value).to.equal(referenceReading(value));
    }
  });
});
