/** A stored value as indented JSON text in a <pre>: whatever a client sent stays text, never markup. */
export function JsonText({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre class="json" tabIndex={0} aria-label={label}>
      {JSON.stringify(value, null, 2) ?? String(value)}
    </pre>
  );
}
