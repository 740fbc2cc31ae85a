import { useState } from 'preact/hooks';
import { recentWarnings, warningGroups, type RecentWarning, type WarningExample, type WarningFilter, type WarningGroup } from '../api';
import { ErrorText, PageHeading } from '../components';
import { formatCount } from '../components/format';
import { usePolling } from '../components/polling';
import { When } from '../components/when';
import type { PageProps } from './page';

const refreshMs = 10_000;
const recentShown = 100;

/**
 * The reasons a request is refused for its credentials or its origin (401, 403; docs/browser.md):
 * what each means and what to do. They are about the request, never an item, and keep no body.
 */
const requestReasons: Record<string, { label: string; help: string }> = {
  unauthorized: {
    label: 'unknown credentials',
    help: 'An access token or browser key that is unknown, revoked or of another account, or none at all.',
  },
  origin_not_allowed: {
    label: 'origin not allowed',
    help: "A browser key used from a page whose origin is not among the key's allowed origins (or with no Origin): add the origin to the key on the Credentials page if the page is yours.",
  },
  access_token_in_page: {
    label: 'access token in a web page',
    help: 'An access token used from a web page, where anyone can read it: rotate it, and use a browser key in pages.',
  },
  secret_in_url: {
    label: 'access token in a URL',
    help: 'An access token sent in a URL, where it may have been logged: rotate it, and send it in the Authorization header.',
  },
};

const isRequestReason = (reason: string): boolean => Object.hasOwn(requestReasons, reason);

/** A reason as the filter offers it: its code, with what it means for a refusal of credentials or origin. */
const reasonText = (reason: string): string => (isRequestReason(reason) ? `${reason} (${requestReasons[reason]?.label})` : reason);

/** How a group's field reads: '' is the request or item as a whole (the request, for a refusal of credentials or origin). */
const requestAsAWhole = 'the request as a whole';
const itemAsAWhole = 'the item as a whole';
const fieldText = (field: string, reason: string): string => (field !== '' ? field : isRequestReason(reason) ? requestAsAWhole : itemAsAWhole);

const matches = (group: WarningGroup, filter: WarningFilter): boolean =>
  (filter.reason === undefined || group.reason === filter.reason) &&
  (filter.field === undefined || group.field === filter.field) &&
  (filter.endpoint === undefined || group.endpoint === filter.endpoint);

/**
 * The items refused after the account was known: one group per reason, field and endpoint (count
 * over 30 days, last seen, the latest examples), then the latest ones; both narrowed by the
 * filter. What the client sent is shown as text.
 */
export function WarningsPage({ license }: PageProps) {
  const [groups, setGroups] = useState<WarningGroup[] | null>(null);
  const [recent, setRecent] = useState<RecentWarning[] | null>(null);
  /** Older pages asked for with "Show older": kept apart from the refreshed latest page. */
  const [older, setOlder] = useState<{ warnings: RecentWarning[]; next: string | null } | null>(null);
  const [firstNext, setFirstNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [filter, setFilter] = useState<WarningFilter>({});

  usePolling(
    async (wanted) => {
      if (!license) return;
      try {
        const [grouped, latest] = await Promise.all([warningGroups(license), recentWarnings(license, recentShown, undefined, filter)]);
        if (!wanted()) return;
        setGroups(grouped.groups);
        setRecent(latest.warnings);
        setFirstNext(latest.nextCursor);
        setError(null);
      } catch (failure) {
        if (wanted()) setError(failure);
      }
    },
    refreshMs,
    license !== null,
    `${license}|${JSON.stringify(filter)}`,
  );

  const choose = (name: keyof WarningFilter, value: string | undefined) => {
    setOlder(null);
    setFilter({ ...filter, [name]: value });
  };
  const shown = groups?.filter((group) => matches(group, filter)) ?? null;

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Ingestion warnings</PageHeading>
      <p class="hint">
        Items refused after the account was known, and requests of its license code refused for their credentials or origin, over the last 30 days.
        Refreshed every 10 seconds.
      </p>
      <ErrorText error={error} />
      {!groups && !error ? <p>Loading…</p> : null}
      {groups && groups.length === 0 ? <p>No item was refused in the last 30 days.</p> : null}
      {groups && groups.length > 0 ? <Filters groups={groups} filter={filter} choose={choose} /> : null}
      {shown && groups && groups.length > 0 ? (
        <>
          <h2>By reason, field and endpoint</h2>
          {shown.length === 0 ? <p>No group matches the filter.</p> : null}
          {shown.map((group) => {
            const name = `${group.reason}, ${fieldText(group.field, group.reason)}, ${group.endpoint}`;
            const meaning = requestReasons[group.reason];
            return (
              <article class="warning-group" key={`${group.reason}|${group.field}|${group.endpoint}`} aria-label={`Refused: ${name}`}>
                <h3>
                  <code>{group.reason}</code> · {group.field === '' ? <span>{fieldText(group.field, group.reason)}</span> : <code>{group.field}</code>} · {group.endpoint}
                </h3>
                {meaning ? (
                  <p class="reason-help">
                    <strong>{meaning.label.charAt(0).toUpperCase() + meaning.label.slice(1)}.</strong> {meaning.help}
                  </p>
                ) : null}
                <p class="group-summary">
                  <strong>{formatCount(group.count)}</strong> {group.count === 1 ? 'item' : 'items'} in 30 days · last seen <When at={group.lastSeenAt} />
                </p>
                <ol class="examples">
                  {group.examples.map((example, index) => (
                    <li key={index}>
                      <Example warning={example} />
                    </li>
                  ))}
                </ol>
              </article>
            );
          })}
        </>
      ) : null}
      {recent && groups && groups.length > 0 ? (
        <>
          <h2>Latest refused items</h2>
          {recent.length === 0 ? <p>None of the latest refused items matches the filter.</p> : null}
          {recent.length > 0 ? <RecentTable warnings={[...recent, ...(older?.warnings ?? [])]} /> : null}
          {(older ? older.next : firstNext) !== null && license ? (
            <p>
              <button
                type="button"
                class="more"
                onClick={() => {
                  const cursor = older ? older.next : firstNext;
                  if (cursor === null) return;
                  recentWarnings(license, recentShown, cursor, filter).then(
                    (page) => setOlder({ warnings: [...(older?.warnings ?? []), ...page.warnings], next: page.nextCursor }),
                    setError,
                  );
                }}
              >
                Show older refused items
              </button>
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

/** Reason, field and endpoint to narrow both lists to, from those the groups have. */
function Filters({ groups, filter, choose }: { groups: WarningGroup[]; filter: WarningFilter; choose: (name: keyof WarningFilter, value: string | undefined) => void }) {
  const options = (name: keyof WarningFilter): string[] => [...new Set(groups.map((group) => group[name]))].sort();
  // The field '' is the request as a whole for a refusal of credentials or origin, the item as a whole for the others.
  const whole = new Set(groups.filter((group) => group.field === '').map((group) => isRequestReason(group.reason)));
  const fieldOption = (field: string): string =>
    field !== '' ? field : whole.size === 2 ? 'the request or item as a whole' : whole.has(true) ? requestAsAWhole : itemAsAWhole;
  const select = (name: keyof WarningFilter, label: string, text: (value: string) => string = (value) => value) => (
    <>
      <label for={`warnings-${name}`}>{label}</label>
      <select
        id={`warnings-${name}`}
        value={filter[name] === undefined ? '*' : `=${filter[name]}`}
        onChange={(event) => {
          const value = (event.currentTarget as HTMLSelectElement).value;
          choose(name, value === '*' ? undefined : value.slice(1));
        }}
      >
        <option value="*">any</option>
        {options(name).map((value) => (
          <option key={value} value={`=${value}`}>
            {text(value)}
          </option>
        ))}
      </select>
    </>
  );
  return (
    <form class="toolbar" aria-label="Filter the refused items" onSubmit={(event) => event.preventDefault()}>
      {select('reason', 'Reason', reasonText)}
      {select('field', 'Field', fieldOption)}
      {select('endpoint', 'Endpoint')}
    </form>
  );
}

function RecentTable({ warnings }: { warnings: RecentWarning[] }) {
  return (
    <div class="table-box" tabIndex={0} role="region" aria-label="Latest refused items">
      <table class="warnings-table stack">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Status</th>
            <th scope="col">Reason</th>
            <th scope="col">Field</th>
            <th scope="col">Message</th>
            <th scope="col">Body</th>
          </tr>
        </thead>
        <tbody>
          {warnings.map((warning, index) => (
            <tr key={index}>
              <td data-label="When">
                <When at={warning.at} />
              </td>
              <td data-label="Endpoint">
                {warning.endpoint}
                <SentBy client={warning.client} />
              </td>
              <td data-label="Status">{warning.status}</td>
              <td data-label="Reason">
                <code>{warning.reason}</code>
                {isRequestReason(warning.reason) ? <span class="hint reason-label"> {requestReasons[warning.reason]?.label}</span> : null}
              </td>
              <td data-label="Field">{warning.field === '' ? <span class="none">—</span> : <code>{warning.field}</code>}</td>
              <td class="message" data-label="Message">
                {warning.message}
              </td>
              <td data-label="Body">
                {warning.excerpt === null ? (
                  'none'
                ) : (
                  <details>
                    <summary>body{warning.truncated ? ' (truncated)' : ''}</summary>
                    <pre class="excerpt">{warning.excerpt}</pre>
                  </details>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The library that sent a refused item, as its message named itself (a Segment message's context.library); nothing when it did not say. */
function SentBy({ client }: { client: string | null }) {
  if (client === null) return null;
  return <span class="hint client"> sent by {client}</span>;
}

function Example({ warning }: { warning: WarningExample }) {
  return (
    <div class="example">
      <dl class="facts">
        <dt>When</dt>
        <dd>
          <When at={warning.at} />
        </dd>
        <dt>Status</dt>
        <dd>{warning.status}</dd>
        <dt>Message</dt>
        <dd class="message">{warning.message}</dd>
        {warning.client !== null ? (
          <>
            <dt>Sent by</dt>
            <dd class="client">{warning.client}</dd>
          </>
        ) : null}
      </dl>
      {warning.excerpt === null ? (
        <p class="hint">No body.</p>
      ) : (
        <>
          <p class="json-label">
            Body excerpt{warning.truncated ? <strong class="truncated"> (truncated: the body was longer)</strong> : null}
          </p>
          <pre class="excerpt" tabIndex={0}>
            {warning.excerpt}
          </pre>
        </>
      )}
    </div>
  );
}
