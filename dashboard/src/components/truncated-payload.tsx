import { useState } from 'preact/hooks';
import { getStoredEvent, type StoredEvent, type Truncated } from '../api';
import { ErrorText } from '../components';
import { JsonText } from './json-text';

/**
 * A payload a list left out (too large for it): its size and the start of its JSON text, as text,
 * and a button that loads the event in full and shows the part `pick` takes of it.
 */
export function TruncatedPayload({
  license,
  eventId,
  marker,
  pick,
  label,
}: {
  license: string;
  eventId: string;
  marker: Truncated[string];
  pick: (event: StoredEvent) => unknown;
  label: string;
}) {
  const [full, setFull] = useState<{ value: unknown } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  if (full) return <JsonText value={full.value} label={label} />;
  const load = () => {
    setLoading(true);
    setError(null);
    getStoredEvent(license, eventId)
      .then((event) => setFull({ value: pick(event) }), setError)
      .finally(() => setLoading(false));
  };
  return (
    <div class="truncated-payload">
      <p class="hint">
        Truncated: {marker.bytes.toLocaleString('en')} bytes of JSON, too large for a list. It starts:
      </p>
      <pre class="json excerpt">{marker.excerpt}…</pre>
      <button type="button" onClick={load} disabled={loading} aria-label={`Load the full ${label}`}>
        {loading ? 'Loading…' : 'Load full payload'}
      </button>
      <ErrorText error={error} />
    </div>
  );
}
