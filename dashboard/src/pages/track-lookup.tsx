import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, lookupTrack, type TrackLookup } from '../api';
import { ErrorText, PageHeading } from '../components';
import { isTrackId } from '../components/format';
import { TrackEvents } from '../components/track-events';
import { navigate, pathTo } from '../router';
import type { PageProps } from './page';

type Lookup =
  | { state: 'idle' }
  | { state: 'invalid'; text: string }
  | { state: 'loading'; trackID: string }
  | { state: 'unknown'; trackID: string }
  | { state: 'failed'; error: unknown }
  | { state: 'found'; lookup: TrackLookup };

/** A lookup with its next page appended: the trackID's events, and each stream's events after those it has. */
function appended(lookup: TrackLookup, page: TrackLookup): TrackLookup {
  const streams = { ...lookup.streams };
  for (const [name, events] of Object.entries(page.streams)) streams[name] = [...(streams[name] ?? []), ...events];
  return { trackID: lookup.trackID, events: [...lookup.events, ...page.events], streams, nextCursor: page.nextCursor };
}

const notATrackId = (text: string) => `"${text}" is not a trackID: a trackID is a UUID such as 0192f3a4-5b6c-7d8e-9f01-23456789abcd.`;

/** /track and /track/:trackID: the stored events of a trackID, looked up from a form or the URL. */
export function TrackLookupPage({ license, params }: PageProps) {
  const wanted = params.trackID ?? '';
  const [typed, setTyped] = useState(wanted);
  const [result, setResult] = useState<Lookup>({ state: 'idle' });
  const shown = useRef(wanted);

  useEffect(() => {
    // The field follows the URL when it changes (back, forward, a link), not over what is typed.
    if (shown.current !== wanted) setTyped(wanted);
    shown.current = wanted;
    if (!wanted || !license) return setResult({ state: 'idle' });
    if (!isTrackId(wanted)) return setResult({ state: 'invalid', text: wanted });
    let current = true;
    setResult({ state: 'loading', trackID: wanted });
    lookupTrack(license, wanted)
      .then((lookup) => current && setResult({ state: 'found', lookup }))
      .catch((error: unknown) => {
        if (!current) return;
        setResult(error instanceof ApiError && error.status === 404 ? { state: 'unknown', trackID: wanted } : { state: 'failed', error });
      });
    return () => {
      current = false;
    };
  }, [license, wanted]);

  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    const text = typed.trim();
    if (!isTrackId(text)) return setResult({ state: 'invalid', text });
    navigate(pathTo('/track/:trackID', { trackID: text.toLowerCase() }));
  };

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Track lookup</PageHeading>
      <form class="lookup-form" onSubmit={submit} noValidate>
        <label for="track-id">trackID</label>
        <input
          id="track-id"
          name="trackID"
          type="text"
          spellcheck={false}
          autocomplete="off"
          value={typed}
          onInput={(event) => setTyped((event.currentTarget as HTMLInputElement).value)}
          aria-describedby="track-id-hint"
        />
        <button type="submit">Look up</button>
      </form>
      <p class="hint" id="track-id-hint">
        The trackID an ingest reply gave for an accepted item.
      </p>
      <div class="result" aria-live="polite">
        <LookupResult license={license ?? ''} result={result} onMore={setResult} />
      </div>
    </section>
  );
}

function LookupResult({ license, result, onMore }: { license: string; result: Lookup; onMore: (next: Lookup) => void }) {
  switch (result.state) {
    case 'idle':
      return null;
    case 'invalid':
      return (
        <p class="error" role="alert">
          {result.text ? notATrackId(result.text) : 'Type a trackID first.'}
        </p>
      );
    case 'loading':
      return <p>Looking up {result.trackID}…</p>;
    case 'unknown':
      return (
        <p class="error" role="alert">
          unknown trackID: no stored item of this account has trackID <code>{result.trackID}</code> (an accepted item is found here within
          about a second).
        </p>
      );
    case 'failed':
      return <ErrorText error={result.error} />;
    case 'found':
      return (
        <>
          <TrackEvents license={license} lookup={result.lookup} />
          <MoreOfLookup license={license} lookup={result.lookup} onMore={(lookup) => onMore({ state: 'found', lookup })} />
        </>
      );
  }
}

/** "Load more": the lookup's next page (a page holds at most 1 MiB), appended to what is shown. */
function MoreOfLookup({ license, lookup, onMore }: { license: string; lookup: TrackLookup; onMore: (lookup: TrackLookup) => void }) {
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(null);
  if (lookup.nextCursor === null) return null;
  const more = () => {
    setLoading(true);
    setError(null);
    lookupTrack(license, lookup.trackID, lookup.nextCursor ?? undefined)
      .then((page) => onMore(appended(lookup, page)), setError)
      .finally(() => setLoading(false));
  };
  return (
    <p>
      <button type="button" class="more" onClick={more} disabled={loading}>
        {loading ? 'Loading…' : 'Load more of the streams'}
      </button>
      <ErrorText error={error} />
    </p>
  );
}
