import { browserText, instantOf, utcText, type Precision } from './format';

/**
 * An instant as `2026-11-23 06:22:38 UTC` (the same on every screen), with the browser's own time
 * and zone on hover, or `none` for none. With precision 'minute' (a time the server keeps to the
 * minute): `2026-11-23 06:22 UTC`. A text that names no zone is shown as it is, never guessed.
 */
export function When({ at, none = '—', precision = 'second' }: { at: string | null | undefined; none?: string; precision?: Precision }) {
  if (!at) return <span class="none">{none}</span>;
  const date = instantOf(at);
  if (!date) return <span>{at}</span>;
  return (
    <time dateTime={date.toISOString()} title={`${browserText(date, precision)} in this browser`}>
      {utcText(date, precision)}
    </time>
  );
}
