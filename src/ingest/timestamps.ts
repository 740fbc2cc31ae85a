/**
 * ISO 8601 date-times as docs/spec.md 2.6 uses them, and as docs/decisions.md (Times) widens them:
 * `YYYY-MM-DDThh:mm:ss`, optional fractional seconds, then no zone (read as UTC), `Z`, or a numeric
 * offset `+hhmm` / `+hh:mm`. A bare `+hh` is refused: `Date` cannot read it and it is easily a typo.
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
 * The instants every store of the service can hold, after reading the time as UTC: the
 * four-digit years of the accepted form, 0001 to 9999. PostgreSQL timestamptz (4713 BC to
 * 294276 AD) and JavaScript Date (±275,760 years) hold more, but an instant past 9999 (a late time
 * with a negative offset) or before year 1 (an early time with a positive offset) has no
 * `YYYY-MM-DDThh:mm:ss` form, so the read models could not store or show it.
 */
export const earliestInstant = '0001-01-01T00:00:00.000000Z';
export const latestInstant = '9999-12-31T23:59:59.999999Z';

const outOfRange = `must be an ISO 8601 date-time from ${earliestInstant} to ${latestInstant} once read as UTC`;

/** The UTC instant, or why the string is not an accepted date-time: no such date, or out of range. */
type Reading = { instant: string } | { problem: 'form' | 'range' };

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

function previousDay(year: number, month: number, day: number): [number, number, number] {
  if (day > 1) return [year, month, day - 1];
  if (month > 1) return [year, month - 1, daysInMonth(year, month - 1)];
  return [year - 1, 12, 31];
}

function nextDay(year: number, month: number, day: number): [number, number, number] {
  if (day < daysInMonth(year, month)) return [year, month, day + 1];
  if (month < 12) return [year, month + 1, 1];
  return [year + 1, 1, 1];
}

/**
 * Reads the time with plain arithmetic rather than `Date` objects: this runs for every date-time
 * of every item (event times, date attributes), and the `Date` round trip was the largest single
 * cost of bulk ingest in the profile (docs/performance.md). An offset under 24 hours moves the
 * time by at most a day either way.
 */
function read(value: string): Reading {
  const match = shape.exec(value);
  if (!match) return { problem: 'form' };
  const [, y, mo, d, h, mi, s, fraction, zone] = match;
  let year = Number(y);
  let month = Number(mo);
  let day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return { problem: 'form' };
  if (hour > 23 || minute > 59 || second > 59) return { problem: 'form' };
  let offsetMinutes = 0;
  if (zone && zone !== 'Z') {
    const digits = zone.length === 6 ? zone.slice(1, 3) + zone.slice(4, 6) : zone.slice(1);
    const offsetHours = Number(digits.slice(0, 2));
    const offsetMins = Number(digits.slice(2, 4));
    if (offsetHours > 23 || offsetMins > 59) return { problem: 'form' };
    offsetMinutes = (zone.charCodeAt(0) === 45 ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  // Year 0 is the year before 1 (PostgreSQL's 1 BC): a real date, but out of range.
  if (year < 1) return { problem: 'range' };
  let minutes = hour * 60 + minute - offsetMinutes;
  if (minutes < 0) {
    minutes += 1440;
    [year, month, day] = previousDay(year, month, day);
  } else if (minutes >= 1440) {
    minutes -= 1440;
    [year, month, day] = nextDay(year, month, day);
  }
  if (year < 1 || year > 9999) return { problem: 'range' };
  const date = `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`;
  const time = `${pad2(Math.floor(minutes / 60))}:${pad2(minutes % 60)}:${pad2(second)}`;
  // Offsets are whole minutes, so the fraction carries over unchanged.
  return { instant: `${date}T${time}.${(fraction ?? '').padEnd(3, '0').slice(0, 6)}Z` };
}

/**
 * The UTC instant of an ISO date-time as `YYYY-MM-DDThh:mm:ss.fffZ`, with up to six fractional
 * digits (microseconds, as PostgreSQL keeps them; further digits are cut); null when it is not a
 * date-time or its instant is out of range.
 */
export function toUtcInstant(value: string): string | null {
  const reading = read(value);
  return 'instant' in reading ? reading.instant : null;
}

/** Why `value` is not an accepted date-time, as the end of a message naming the field; null when it is. */
export function dateTimeProblem(value: string): string | null {
  const reading = read(value);
  if ('instant' in reading) return null;
  return reading.problem === 'range' ? outOfRange : `must be ${dateTimeHint}`;
}

/** An event's time as sent and as a UTC instant; without one, the time the service received it. */
export function eventTimes(eventTime: string | undefined, receivedAt: string): { eventTime: string | null; eventTimeUtc: string } {
  return eventTime === undefined ? { eventTime: null, eventTimeUtc: receivedAt } : { eventTime, eventTimeUtc: toUtcInstant(eventTime) as string };
}
