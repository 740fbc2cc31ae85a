import { useEffect, useState } from 'preact/hooks';
import { TruncatedPayload } from '../components/truncated-payload';
import { systemAttributes } from '../../../src/spec/system-attributes';
import { ApiError, getLead, leadTimeline, type Lead, type TimelineEntry } from '../api';
import { ErrorText, PageHeading } from '../components';
import { ScrollBox } from '../components/scroll-box';
import { When } from '../components/when';
import { Link, pathTo } from '../router';
import { leadIdOf } from './leads';
import type { PageProps } from './page';

/** A value a client sent, as text: strings as they are, anything else as JSON. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * One lead: every system attribute of docs/spec.md 2.2, its custom attributes with their registered types,
 * the anonymous ids merged into it and its timeline (profiles sent and events, latest first).
 */
export function LeadPage({ license, params }: PageProps) {
  const id = params.id ?? '';
  // Kept with the id it was loaded for: on the render that follows a new id, before the effect
  // below runs, the previous lead must not be shown under the new id.
  const [loaded, setLoaded] = useState<{ id: string; lead: Lead } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const lead = loaded?.id === id ? loaded.lead : null;

  useEffect(() => {
    if (!license) return;
    let current = true;
    setLoaded(null);
    setError(null);
    getLead(license, id).then(
      (found) => current && setLoaded({ id, lead: found }),
      (failure: unknown) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [license, id]);

  const known = lead ? leadIdOf(lead) : id;
  return (
    <section aria-labelledby="page-heading">
      <PageHeading>Lead {known}</PageHeading>
      <p>
        <Link href="/leads">Back to leads</Link>
      </p>
      {error ? (
        <ErrorText error={error instanceof ApiError && error.status === 404 ? new Error(`No lead with the id ${id} in this account.`) : error} />
      ) : !lead ? (
        <p role="status">Loading the lead…</p>
      ) : (
        <>
          {lead.userId !== null && id !== lead.userId ? (
            <p class="note" role="note">
              The anonymous id {id} was merged into this known user.
            </p>
          ) : null}
          <p>
            {lead.userId === null ? 'Anonymous lead' : 'Known user'}, created <When at={lead.createdAt} />, updated <When at={lead.updatedAt} />.
          </p>
          <SystemAttributes lead={lead} />
          <CustomAttributes lead={lead} />
          <MergedIds lead={lead} />
          {license ? <Timeline license={license} id={known} /> : null}
        </>
      )}
    </section>
  );
}

function SystemAttributes({ lead }: { lead: Lead }) {
  return (
    <section aria-labelledby="system-attributes">
      <h2 id="system-attributes">System attributes</h2>
      <ScrollBox label="System attributes">
        <table class="data attributes">
          <thead>
            <tr>
              <th scope="col">Attribute</th>
              <th scope="col">Type</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {systemAttributes.map((attribute) => {
              const value = lead[attribute.name];
              return (
                <tr key={attribute.name}>
                  <th scope="row">{attribute.name}</th>
                  <td>{attribute.type}</td>
                  <td>{value === null || value === undefined ? <span class="none">not set</span> : shown(value)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollBox>
    </section>
  );
}

function CustomAttributes({ lead }: { lead: Lead }) {
  const names = Object.keys(lead.attributes ?? {}).sort();
  return (
    <section aria-labelledby="custom-attributes">
      <h2 id="custom-attributes">Custom attributes</h2>
      {names.length === 0 ? (
        <p>None sent.</p>
      ) : (
        <ScrollBox label="Custom attributes">
          <table class="data attributes">
            <thead>
              <tr>
                <th scope="col">Attribute</th>
                <th scope="col">Type</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {names.map((name) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{lead.attributeTypes?.[name] ?? 'not registered'}</td>
                  <td>{shown(lead.attributes[name])}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </section>
  );
}

function MergedIds({ lead }: { lead: Lead }) {
  const ids = lead.anonymousIds ?? [];
  return (
    <section aria-labelledby="merged-ids">
      <h2 id="merged-ids">Merged anonymous ids</h2>
      {ids.length === 0 ? (
        <p>None.</p>
      ) : (
        <ul class="merged">
          {ids.map((anonymousId) => (
            <li key={anonymousId}>
              <Link href={pathTo('/leads/:id', { id: anonymousId })}>{anonymousId}</Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function describe(entry: TimelineEntry): string {
  if (entry.kind === 'event') return `Event ${entry.eventName ?? '(details not applied yet)'}`;
  const who = entry.userId !== undefined ? `userId ${entry.userId}` : `anonymousId ${entry.anonymousId ?? ''}`;
  return `${entry.eventType === 'ProfilesMerged' ? 'Profiles merged' : 'Profile sent'} (${who})`;
}

function Timeline({ license, id }: { license: string; id: string }) {
  const [entries, setEntries] = useState<TimelineEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    setEntries(null);
    setError(null);
    leadTimeline(license, id).then(({ entries: found, nextCursor }) => {
      setEntries(found);
      setNext(nextCursor);
    }, setError);
  }, [license, id]);
  const more = () => {
    if (next === null) return;
    setLoadingMore(true);
    leadTimeline(license, id, undefined, next)
      .then(({ entries: found, nextCursor }) => {
        setEntries((shown) => [...(shown ?? []), ...found]);
        setNext(nextCursor);
      }, setError)
      .finally(() => setLoadingMore(false));
  };

  return (
    <section aria-labelledby="timeline">
      <h2 id="timeline">Timeline</h2>
      <ErrorText error={error} />
      {!entries ? (
        error ? null : (
          <p role="status">Loading the timeline…</p>
        )
      ) : entries.length === 0 ? (
        <p>Nothing yet.</p>
      ) : (
        <ScrollBox label="Timeline">
          <table class="data">
            <thead>
              <tr>
                <th scope="col">Stored</th>
                <th scope="col">What</th>
                <th scope="col">Details</th>
                <th scope="col">trackID</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry, index) => (
                <tr key={`${entry.trackID}-${index}`}>
                  <td>
                    <When at={entry.at} />
                  </td>
                  <td>{describe(entry)}</td>
                  <td class="details">
                    {entry.kind === 'event' ? (
                      <>
                        {entry.eventTime ? (
                          <>
                            at <When at={entry.eventTime} />{' '}
                          </>
                        ) : null}
                        {entry.truncated?.eventData ? (
                          <TruncatedPayload
                            license={license}
                            eventId={entry.eventId}
                            marker={entry.truncated.eventData}
                            pick={(event) => (event.data as { eventData?: unknown }).eventData}
                            label={`event data of ${entry.eventName ?? 'the event'}`}
                          />
                        ) : entry.eventData && Object.keys(entry.eventData).length ? (
                          <code>{JSON.stringify(entry.eventData)}</code>
                        ) : null}
                      </>
                    ) : null}
                  </td>
                  <td>
                    <Link href={pathTo('/track/:trackID', { trackID: entry.trackID })}>
                      <code>{entry.trackID}</code>
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {entries && next !== null ? (
        <p>
          <button type="button" class="more" onClick={more} disabled={loadingMore}>
            {loadingMore ? 'Loading…' : 'More of the timeline'}
          </button>
        </p>
      ) : null}
    </section>
  );
}
