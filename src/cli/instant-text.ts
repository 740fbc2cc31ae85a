/** How finely an instant is kept: to the second, or to the minute (as access tokens' last use). */
export type InstantPrecision = 'second' | 'minute';

/**
 * An instant as the dashboard shows it (its When component), from its UTC value:
 * `2026-11-23 06:22:38 UTC`, or `2026-11-23 06:22 UTC` for a time the server keeps to the minute
 * (printing `:00` seconds would claim a precision it does not have). `none` for no instant; a
 * text that is no instant as it is, rather than hiding it.
 */
export function instantText(at: string | null | undefined, options: { none?: string; precision?: InstantPrecision } = {}): string {
  const { none = '—', precision = 'second' } = options;
  if (!at) return none;
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return at;
  return `${date.toISOString().slice(0, precision === 'minute' ? 16 : 19).replace('T', ' ')} UTC`;
}
