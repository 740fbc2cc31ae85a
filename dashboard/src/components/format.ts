/**
 * Times and counts as the pages show them. Every instant is shown from its UTC value in one
 * format, `2026-11-23 06:22:38 UTC` (When, instantText), with the browser's own time on hover;
 * counts in the browser's locale.
 */

/** The browser's locale, or English when it names one Intl does not take (such as 'en-US@posix'). */
function formatter<T>(make: (locale: string | undefined) => T): T {
  try {
    return make(undefined);
  } catch {
    return make('en');
  }
}

const numberFormat = formatter((locale) => new Intl.NumberFormat(locale));

export type Precision = 'second' | 'minute';

/** The instant of an ISO text that names its zone (the server's replies always do), or null. */
export function instantOf(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  // Without a zone, `new Date()` would read the text as the browser's local time.
  if (!/(Z|[+-]\d{2}:?\d{2})$/i.test(iso.trim())) return null;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

const two = (n: number): string => String(n).padStart(2, '0');

/** `2026-11-23 06:22:38 UTC`; to the minute with precision 'minute'. */
export function utcText(date: Date, precision: Precision = 'second'): string {
  return `${date.toISOString().slice(0, precision === 'minute' ? 16 : 19).replace('T', ' ')} UTC`;
}

/** The browser's time zone, as Intl names it, or null when it cannot tell: read once, not at every instant shown. */
const browserZone: string | null = (() => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone ?? null;
  } catch {
    return null;
  }
})();

/** The same instant in the browser's zone: `2026-11-22 22:22:38 America/Los_Angeles (UTC-08:00)`. */
export function browserText(date: Date, precision: Precision = 'second'): string {
  const clock = `${two(date.getHours())}:${two(date.getMinutes())}${precision === 'minute' ? '' : `:${two(date.getSeconds())}`}`;
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const zone = `UTC${sign}${two(Math.floor(Math.abs(offset) / 60))}:${two(Math.abs(offset) % 60)}`;
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${clock} ${browserZone ? `${browserZone} (${zone})` : zone}`;
}

/** An ISO instant as text in the one format; the text itself when it is no instant; '—' for none. */
export function instantText(iso: string | null | undefined, precision: Precision = 'second'): string {
  if (!iso) return '—';
  const date = instantOf(iso);
  return date ? utcText(date, precision) : iso;
}

export const formatCount = (count: number): string => numberFormat.format(count);

/** Seconds as "0.4 s", "12 s", "3 min 5 s", "2 h 10 min". */
export function formatSeconds(seconds: number): string {
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${whole % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A trackID is a UUID: anything else is refused before asking the server. */
export const isTrackId = (text: string): boolean => uuid.test(text);
