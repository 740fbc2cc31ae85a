import { useState } from 'preact/hooks';
import { recentWarnings, warningGroups, type WarningExample, type WarningGroup } from '../api';
import { ErrorText, PageHeading } from '../components';
import { formatCount } from '../components/format';
import { usePolling } from '../components/polling';
import type { PageProps } from './page';
import { When } from '../components/when';

type Warning = WarningExample & { reason: string };

const refreshMs = 10_000;
const recentShown = 100;

/**
 * The items refused after the account was known: one group per reason (count over 30 days, last
 * seen, the latest examples), then the latest ones. What the client sent is shown as text.
 */
export function WarningsPage({ license }: PageProps) {
  const [groups, setGroups] = useState<WarningGroup[] | null>(null);
  const [recent, setRecent] = useState<Warning[] | null>(null);
  /** Older pages asked for with "Show older": kept apart from the refreshed latest page. */
  const [older, setOlder] = useState<{ warnings: Warning[]; next: string | null } | null>(null);
  const [firstNext, setFirstNext] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  usePolling(
    async (wanted) => {
      if (!license) return;
      try {
        const [grouped, latest] = await Promise.all([warningGroups(license), recentWarnings(license, recentShown)]);
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
    license,
  );

  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Ingestion warnings</PageHeading>
      <p class="hint">Items refused after the account was known, over the last 30 days. Refreshed every 10 seconds.</p>
      <ErrorText error={error} />
      {!groups && !error ? <p>Loading…</p> : null}
      {groups && groups.length === 0 ? <p>No item was refused in the last 30 days.</p> : null}
      {groups && groups.length > 0 ? (
        <>
          <h2>By reason</h2>
          {groups.map((group) => (
            <article class="warning-group" key={group.reason} aria-label={`Reason ${group.reason}`}>
              <h3>
                <code>{group.reason}</code>
              </h3>
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
          ))}
        </>
      ) : null}
      {recent && recent.length > 0 ? (
        <>
          <h2>Latest refused items</h2>
          <div class="table-box" tabIndex={0} role="region" aria-label="Latest refused items">
            <table class="warnings-table stack">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Endpoint</th>
                  <th scope="col">Status</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Message</th>
                  <th scope="col">Body</th>
                </tr>
              </thead>
              <tbody>
                {[...recent, ...(older?.warnings ?? [])].map((warning, index) => (
                  <tr key={index}>
                    <td data-label="When"><When at={warning.at} /></td>
                    <td data-label="Endpoint">{warning.endpoint}</td>
                    <td data-label="Status">{warning.status}</td>
                    <td data-label="Reason">
                      <code>{warning.reason}</code>
                    </td>
                    <td class="message" data-label="Message">{warning.message}</td>
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
          {(older ? older.next : firstNext) !== null && license ? (
            <p>
              <button
                type="button"
                class="more"
                onClick={() => {
                  const cursor = older ? older.next : firstNext;
                  if (cursor === null) return;
                  recentWarnings(license, recentShown, cursor).then(
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

function Example({ warning }: { warning: WarningExample }) {
  return (
    <div class="example">
      <dl class="facts">
        <dt>When</dt>
        <dd><When at={warning.at} /></dd>
        <dt>Endpoint</dt>
        <dd>{warning.endpoint}</dd>
        <dt>Status</dt>
        <dd>{warning.status}</dd>
        <dt>Message</dt>
        <dd class="message">{warning.message}</dd>
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
