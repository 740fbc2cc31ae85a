/**
 * ISO 8601 date-times as the spec uses them (2.6): `YYYY-MM-DDThh:mm:ss`, optional fractional
 * seconds, then no zone (read as UTC), `Z`, or a numeric offset `+hhmm` / `+hh:mm`. A bare `+hh`
 * is refused: `Date` cannot read it and it is easily a typo.
 */
const shape = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;

export const dateTimeHint =
  'an ISO 8601 date-time such as 2024-05-01T12:30:00, 2024-05-01T12:30:00.123456+0200 or 2024-05-01T12:30:00Z';

/** True when the string has the form of a date-time (whether or not the date exists). */
export function looksLikeDateTime(value: string): boolean {
  return shape.test(value);
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  return [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

/**
 * The UTC instant of an ISO date-time as `YYYY-MM-DDThh:mm:ss.fffZ`, with up to six fractional
 * digits (microseconds, as PostgreSQL keeps them); null when it is not a date-time.
 */
export function toUtcInstant(value: string): string | null {
  const match = shape.exec(value);
  if (!match) return null;
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  // Year 0 and earlier have no ISO 8601 basic form here and no PostgreSQL timestamptz.
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (zone && zone !== 'Z') {
    const digits = zone.replace(':', '');
    const offsetHours = Number(digits.slice(1, 3));
    const offsetMins = Number(digits.slice(3, 5));
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  // Offsets are whole minutes, so the fraction carries over unchanged.
  const utc = new Date(date.getTime() - offsetMinutes * 60_000);
  if (utc.getUTCFullYear() < 1) return null;
  const seconds = utc.toISOString().slice(0, 19);
  return `${seconds}.${(fraction ?? '').padEnd(3, '0').slice(0, 6)}Z`;
}

/** An event's time as sent and as a UTC instant; without one, the time the service received it. */
export function eventTimes(eventTime: string | undefined, receivedAt: string): { eventTime: string | null; eventTimeUtc: string } {
  return eventTime === undefined ? { eventTime: null, eventTimeUtc: receivedAt } : { eventTime, eventTimeUtc: toUtcInstant(eventTime) as string };
}
