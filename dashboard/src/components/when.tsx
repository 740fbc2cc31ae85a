/** An instant as `2026-11-23 06:22:38 UTC` (the same on every screen), or a dash for none. */
export function When({ at, none = '—' }: { at: string | null | undefined; none?: string }) {
  if (!at) return <span class="none">{none}</span>;
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return <span>{at}</span>;
  return <time dateTime={date.toISOString()}>{`${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`}</time>;
}
