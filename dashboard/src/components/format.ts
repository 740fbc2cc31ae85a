/** Times and counts as the pages show them: the browser's locale, to the second. */

/** The browser's locale, or English when it names one Intl does not take (such as 'en-US@posix'). */
function formatter<T>(make: (locale: string | undefined) => T): T {
  try {
    return make(undefined);
  } catch {
    return make('en');
  }
}

const timeFormat = formatter((locale) => new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'medium' }));
const numberFormat = formatter((locale) => new Intl.NumberFormat(locale));

/** An ISO time as a local date and time; the text itself when it is no time. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : timeFormat.format(date);
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
