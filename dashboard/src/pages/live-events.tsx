import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { liveEvents, lookupTrack, type LiveItem, type LiveKind, type TrackLookup } from '../api';
import { ErrorText, PageHeading } from '../components';
import { ndjsonExport, tableExport, type ExportSelection } from '../components/export-link';
import { usePolling } from '../components/polling';
import { When } from '../components/when';
import { TrackEvents } from '../components/track-events';
import { Link, pathTo } from '../router';
import type { PageProps } from './page';

/** Rows kept in the page: the oldest go first. */
const maxRows = 500;
const pollMs = 1_000;
const kinds: { value: LiveKind | ''; label: string }[] = [
  { value: '', label: 'All kinds' },
  { value: 'users', label: 'users' },
  { value: 'events', label: 'events' },
  { value: 'products', label: 'products' },
  { value: 'productsevents', label: 'productsevents' },
];

/**
 * The account's latest stored items, newest first, polled every second with the cursor of the
 * previous reply while the page is shown and not paused. A row opens its stored JSON.
 */
export function LiveEventsPage({ license }: PageProps) {
  const [rows, setRows] = useState<LiveItem[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [paused, setPaused] = useState(false);
  const [kind, setKind] = useState<LiveKind | ''>('');
  // The filters applied (on submit), and what the boxes hold meanwhile.
  const [filter, setFilter] = useState<{ name: string; user: string }>({ name: '', user: '' });
  const [typed, setTyped] = useState<{ name: string; user: string }>({ name: '', user: '' });
  const [opened, setOpened] = useState<string | null>(null);
  const cursor = useRef<string | undefined>(undefined);
  const [older, setOlder] = useState<string | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);

  // Another account, kind or filter starts a new list.
  useEffect(() => {
    cursor.current = undefined;
    setRows([]);
    setLoaded(false);
    setOpened(null);
  }, [license, kind, filter]);

  const query = { kind: kind || undefined, name: filter.name || undefined, user: filter.user || undefined };
  const filtered = kind !== '' || filter.name !== '' || filter.user !== '';

  usePolling(
    async (wanted) => {
      if (!license) return;
      try {
        const after = cursor.current;
        const reply = await liveEvents(license, { ...query, after, limit: after ? 200 : 50 });
        if (!wanted()) return;
        cursor.current = reply.cursor;
        if (after === undefined) setOlder(reply.olderCursor);
        // Older items loaded with "Show older" stay: the list keeps at least what was asked for.
        if (reply.items.length > 0) setRows((shown) => [...reply.items, ...shown].slice(0, Math.max(maxRows, shown.length)));
        setLoaded(true);
        setError(null);
      } catch (failure) {
        if (wanted()) setError(failure);
      }
    },
    pollMs,
    !paused && license !== null,
    `${license}|${kind}|${filter.name}|${filter.user}`,
  );

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Live events</PageHeading>
      <div class="toolbar">
        <button type="button" class="secondary" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <label for="live-kind">Kind</label>
        <select id="live-kind" value={kind} onChange={(event) => setKind((event.currentTarget as HTMLSelectElement).value as LiveKind | '')}>
          {kinds.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
        <span class="status-text" role="status">
          {paused ? 'Paused: new items are not fetched.' : 'Live: checked every second.'}
        </span>
      </div>
      <form
        class="toolbar live-filter"
        aria-label="Filter the items"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter({ name: typed.name.trim(), user: typed.user.trim() });
        }}
      >
        <label for="live-name">Event name</label>
        <input id="live-name" type="search" value={typed.name} placeholder="any" onInput={(event) => setTyped({ ...typed, name: (event.currentTarget as HTMLInputElement).value })} />
        <label for="live-user">User</label>
        <input
          id="live-user"
          type="search"
          value={typed.user}
          placeholder="userId or anonymousId"
          onInput={(event) => setTyped({ ...typed, user: (event.currentTarget as HTMLInputElement).value })}
        />
        <button type="submit">Filter</button>
        {filter.name !== '' || filter.user !== '' ? (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setTyped({ name: '', user: '' });
              setFilter({ name: '', user: '' });
            }}
          >
            Clear
          </button>
        ) : null}
      </form>
      {license ? <ExportLinks license={license} selection={query} /> : null}
      <ErrorText error={error} />
      {!loaded && !error ? <p>Loading the latest items…</p> : null}
      {loaded && rows.length === 0 ? <p>{filtered ? 'No stored item matches these filters yet.' : 'No item stored yet.'}</p> : null}
      {rows.length > 0 ? (
        <div class="table-box" tabIndex={0} role="region" aria-label="Latest items">
          <table class="live-table stack">
            <caption class="visually-hidden">Latest stored items, newest first (at most {maxRows})</caption>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Item</th>
                <th scope="col">User</th>
                <th scope="col">Payload</th>
                <th scope="col">trackID</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.globalPosition} class={opened === row.trackID ? 'selected' : undefined}>
                  <td data-label="Received"><When at={row.receivedAt} /></td>
                  <td data-label="Item">
                    <ItemName row={row} />
                  </td>
                  <td data-label="User">
                    <PersonOf row={row} />
                  </td>
                  <td data-label="Payload">{row.preview === null ? <span class="none">—</span> : <code class="preview">{row.preview}</code>}</td>
                  <td data-label="trackID">
                    <button type="button" class="link" aria-expanded={opened === row.trackID} onClick={() => setOpened(opened === row.trackID ? null : row.trackID)}>
                      <span class="visually-hidden">Show the stored JSON of </span>
                      <code>{row.trackID}</code>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {rows.length > 0 && older && license ? (
        <p>
          <button
            type="button"
            class="more"
            disabled={loadingOlder}
            onClick={() => {
              setLoadingOlder(true);
              liveEvents(license, { ...query, before: older, limit: 50 })
                .then((reply) => {
                  setRows((shown) => [...shown, ...reply.items]);
                  setOlder(reply.olderCursor);
                }, setError)
                .finally(() => setLoadingOlder(false));
            }}
          >
            {loadingOlder ? 'Loading…' : 'Show older items'}
          </button>
        </p>
      ) : null}
      {opened && license ? <StoredJsonPanel license={license} trackID={opened} onClose={() => setOpened(null)} /> : null}
    </section>
  );
}

/**
 * Downloads of every stored item the applied filters select (not only the rows shown): plain links
 * the browser saves as it receives them. CSV and Parquet have the columns of one kind, so they wait for a kind.
 */
function ExportLinks({ license, selection }: { license: string; selection: ExportSelection }) {
  const ndjson = ndjsonExport(license, selection);
  const { kind } = selection;
  const csv = kind === undefined ? null : tableExport(license, 'csv', { ...selection, kind });
  const parquet = kind === undefined ? null : tableExport(license, 'parquet', { ...selection, kind });
  return (
    <div class="toolbar live-export">
      <span class="status-text">All stored items these filters select:</span>
      <a class="download" href={ndjson.href} download={ndjson.fileName}>
        Download NDJSON
      </a>
      {csv && parquet ? (
        <>
          <a class="download" href={csv.href} download={csv.fileName}>
            Download CSV
          </a>
          <a class="download" href={parquet.href} download={parquet.fileName}>
            Download Parquet
          </a>
        </>
      ) : (
        <span class="hint">CSV and Parquet: choose a kind first (their columns are those of one kind).</span>
      )}
    </div>
  );
}

/** What an item is: its event name (with the product of a product event), a profile, a merge or a product. */
function ItemName({ row }: { row: LiveItem }) {
  const product = row.productId === null ? null : <span class="hint"> product {row.productId}</span>;
  switch (row.eventType) {
    case 'EventTracked':
    case 'ProductEventTracked':
      return (
        <>
          <strong>{row.name ?? row.eventType}</strong>
          {product}
        </>
      );
    case 'UserUpserted':
      return <>profile</>;
    case 'ProfilesMerged':
      return <>profiles merged</>;
    default:
      return <>product{product}</>;
  }
}

/** The person of an item: the userId, else the anonymousId, named as which. */
function PersonOf({ row }: { row: LiveItem }) {
  if (row.userId !== null) {
    return (
      <>
        <code>{row.userId}</code>
        {row.anonymousId !== null ? <span class="hint"> anonymousId {row.anonymousId}</span> : null}
      </>
    );
  }
  if (row.anonymousId !== null) {
    return (
      <>
        <code>{row.anonymousId}</code> <span class="hint">anonymous</span>
      </>
    );
  }
  return <span class="none">—</span>;
}

/** The track lookup of one row's trackID, in a panel under the list. */
function StoredJsonPanel({ license, trackID, onClose }: { license: string; trackID: string; onClose: () => void }) {
  const [lookup, setLookup] = useState<TrackLookup | null>(null);
  const [error, setError] = useState<unknown>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  // The panel takes the focus as it is shown (before paint, so that a key pressed next goes there).
  useLayoutEffect(() => heading.current?.focus(), [trackID]);

  useEffect(() => {
    let current = true;
    setLookup(null);
    setError(null);
    lookupTrack(license, trackID)
      .then((found) => current && setLookup(found))
      .catch((failure: unknown) => current && setError(failure));
    return () => {
      current = false;
    };
  }, [license, trackID]);

  return (
    <aside class="panel" aria-labelledby="stored-json-heading">
      <div class="panel-head">
        <h2 id="stored-json-heading" tabIndex={-1} ref={heading}>
          Stored JSON
        </h2>
        <button type="button" class="secondary" onClick={onClose}>
          Close
        </button>
      </div>
      <p>
        <Link href={pathTo('/track/:trackID', { trackID })}>Open trackID {trackID} in the track lookup</Link>
      </p>
      <ErrorText error={error} />
      {!lookup && !error ? <p>Loading…</p> : null}
      {lookup ? <TrackEvents license={license} lookup={lookup} level={3} /> : null}
    </aside>
  );
}
