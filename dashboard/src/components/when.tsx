/**
 * An instant as `2026-11-23 06:22:38 UTC` (the same on every screen), or `none` for none. With
 * precision 'minute' (a time the server keeps to the minute): `2026-11-23 06:22 UTC`.
 */
export function When({ at, none = '—', precision = 'second' }: { at: string | null | undefined; none?: string; precision?: 'second' | 'minute' }) {
  if (!at) return <span class="none">{none}</span>;
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return <span>{at}</span>;
  const text = date.toISOString().slice(0, precision === 'minute' ? 16 : 19).replace('T', ' ');
  return <time dateTime={date.toISOString()}>{`${text} UTC`}</time>;
}
