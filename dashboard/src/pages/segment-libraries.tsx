import { useEffect, useRef, useState } from 'preact/hooks';
import { accountSettings, ApiError, changeAccountSettings, type AddressPolicy } from '../api';
import { ErrorText } from '../components';
import { CopyButton } from '../components/copy-button';
import { SnippetFigure } from '../components/snippet';

const accessTokenPlaceholder = '<ACCESS_TOKEN>';
const browserKeyPlaceholder = '<BROWSER_KEY>';

/** A value written as a single-quoted JavaScript string, as the libraries' own examples write them. */
const jsText = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;

/** Where the service is, as this page sees it: analytics-next takes the host and the protocol apart. */
interface ServiceLocation {
  origin: string;
  host: string;
  protocol: string;
}

/** A server with Segment's analytics-node: an access token of scope ingest as the write key, the service as its host. */
export function analyticsNodeSnippet({ origin }: ServiceLocation): string {
  return [
    `import { Analytics } from '@segment/analytics-node';`,
    ``,
    `const analytics = new Analytics({ writeKey: ${jsText(accessTokenPlaceholder)}, host: ${jsText(origin)} });`,
    `analytics.identify({ userId: 'user-42', traits: { email: 'ann@example.com', plan: 'pro' } });`,
    `analytics.track({ userId: 'user-42', event: 'Signed Up', properties: { source: 'web' } });`,
    `await analytics.closeAndFlush();`,
  ].join('\n');
}

/**
 * A page with Segment's analytics-next: a browser key as the write key; its settings come from the
 * service (`cdnURL`), and its messages go there (`apiHost`, `protocol`), never to Segment.
 */
export function analyticsNextSnippet({ origin, host, protocol }: ServiceLocation): string {
  return [
    `import { AnalyticsBrowser } from '@segment/analytics-next';`,
    ``,
    `export const analytics = AnalyticsBrowser.load(`,
    `  { writeKey: ${jsText(browserKeyPlaceholder)}, cdnURL: ${jsText(origin)} },`,
    `  { integrations: { 'Segment.io': { apiHost: ${jsText(`${host}/v1`)}, protocol: ${jsText(protocol)} } } },`,
    `);`,
    `analytics.page();`,
  ].join('\n');
}

/**
 * Segment-compatible libraries (docs/segment.md): what a team that already sends with Segment's or
 * RudderStack's libraries changes to send here (the host, the write key), two snippets with
 * placeholders (a token is shown once, when made, never here), and the account's setting of what
 * is kept of a visitor's address.
 */
export function SegmentLibraries({ license }: { license: string }) {
  const location: ServiceLocation = { origin: window.location.origin, host: window.location.host, protocol: window.location.protocol.replace(/:$/, '') };
  const snippets = [
    { title: 'analytics-node (servers)', name: 'analytics-node', text: analyticsNodeSnippet(location) },
    { title: 'analytics-next (pages)', name: 'analytics-next', text: analyticsNextSnippet(location) },
  ];
  return (
    <section aria-labelledby="segment-heading">
      <h2 id="segment-heading">Segment-compatible libraries</h2>
      <h3>Already using Segment or RudderStack?</h3>
      <p>
        Keep your calls (identify, track, page, screen, group, alias) and point the library at this service: change its host, and use one of this account's
        credentials as its write key. Each message is stored as users, events and product events.
      </p>
      <dl class="segment-facts">
        <dt>Host</dt>
        <dd>
          <code>{location.origin}</code> <CopyButton text={location.origin} label="Copy the host for Segment libraries" />
        </dd>
        <dt>Write key on servers</dt>
        <dd>An access token of scope ingest (analytics-node and Segment's or RudderStack's other server libraries). Never in a page.</dd>
        <dt>Write key in pages</dt>
        <dd>A browser key whose origins include the page's (analytics-next): the key is public, and works only from those origins.</dd>
      </dl>
      <p class="hint">
        Replace {accessTokenPlaceholder} with an access token of scope ingest and {browserKeyPlaceholder} with a browser key: each is shown once, when it is
        made, above.
      </p>
      {snippets.map((snippet) => (
        <SnippetFigure key={snippet.name} snippet={snippet} />
      ))}
      <VisitorAddresses license={license} />
    </section>
  );
}

const policyText: Record<AddressPolicy, string> = {
  keep: 'keep: the whole address',
  truncate: 'truncate: its network part only (default)',
  drop: 'drop: no address',
};

const savedText: Record<AddressPolicy, string> = {
  keep: 'Saved: addresses are kept whole.',
  truncate: 'Saved: addresses are kept without their last part.',
  drop: 'Saved: no address is kept.',
};

type Loaded = { state: 'loading' } | { state: 'failed'; error: unknown } | { state: 'loaded'; policy: AddressPolicy };

/**
 * The account's address policy, read from the settings API and saved as soon as it is changed.
 * Read-only when the API refuses a change (403): the value is shown, the control disabled.
 */
function VisitorAddresses({ license }: { license: string }) {
  const [loaded, setLoaded] = useState<Loaded>({ state: 'loading' });
  const [status, setStatus] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [readOnly, setReadOnly] = useState(false);
  // Changes go one after another, so that the last one chosen is the one kept.
  const queue = useRef<Promise<void>>(Promise.resolve());
  const wanted = useRef<AddressPolicy | null>(null);

  useEffect(() => {
    let current = true;
    setLoaded({ state: 'loading' });
    setStatus('');
    setError(null);
    setReadOnly(false);
    accountSettings(license).then(
      (settings) => current && setLoaded({ state: 'loaded', policy: settings.addressPolicy }),
      (failure: unknown) => current && setLoaded({ state: 'failed', error: failure }),
    );
    return () => {
      current = false;
    };
  }, [license]);

  const choose = (policy: AddressPolicy) => {
    if (loaded.state !== 'loaded') return;
    const before = loaded.policy;
    wanted.current = policy;
    setLoaded({ state: 'loaded', policy });
    setStatus('Saving…');
    setError(null);
    queue.current = queue.current.then(async () => {
      try {
        const saved = await changeAccountSettings(license, { addressPolicy: policy });
        if (wanted.current !== policy) return;
        setLoaded({ state: 'loaded', policy: saved.addressPolicy });
        setStatus(savedText[saved.addressPolicy]);
      } catch (failure) {
        if (wanted.current !== policy) return;
        setLoaded({ state: 'loaded', policy: before });
        setStatus('');
        setError(failure);
        if (failure instanceof ApiError && failure.status === 403) setReadOnly(true);
      }
    });
  };

  return (
    <section aria-labelledby="visitor-addresses-heading">
      <h3 id="visitor-addresses-heading">Visitors' addresses</h3>
      <p class="hint" id="visitor-addresses-hint">
        What is kept of a visitor's address (a message's context.ip, or the address of the page that sent it), as the lead attribute ip. Truncated, an IPv4
        address loses its last part (203.0.113.0) and an IPv6 address keeps its first 48 bits. A change applies to what is sent from then on.
      </p>
      {loaded.state === 'loading' ? <p role="status">Loading the setting…</p> : null}
      {loaded.state === 'failed' ? <ErrorText error={loaded.error} /> : null}
      {loaded.state === 'loaded' ? (
        <form class="inline-form settings-form" onSubmit={(event) => event.preventDefault()}>
          <div class="field">
            <label for="visitor-addresses">Visitor addresses</label>
            <select
              id="visitor-addresses"
              name="addressPolicy"
              aria-describedby={readOnly ? 'visitor-addresses-hint visitor-addresses-read-only' : 'visitor-addresses-hint'}
              disabled={readOnly}
              value={loaded.policy}
              onChange={(event) => choose((event.currentTarget as HTMLSelectElement).value as AddressPolicy)}
            >
              {(Object.keys(policyText) as AddressPolicy[]).map((policy) => (
                <option key={policy} value={policy}>
                  {policyText[policy]}
                </option>
              ))}
            </select>
          </div>
          <p role="status" class="hint">
            {status}
          </p>
          {readOnly ? (
            <p class="hint" id="visitor-addresses-read-only">
              Read-only: these credentials may not change the account's settings.
            </p>
          ) : null}
          <ErrorText error={error} />
        </form>
      ) : null}
    </section>
  );
}
