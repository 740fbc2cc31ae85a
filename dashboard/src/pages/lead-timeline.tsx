import { useEffect, useState } from 'preact/hooks';
import { leadTimeline, type TimelineEntry } from '../api';
import { ErrorText } from '../components';
import { ErasedBadge, ErasedNote } from '../components/erased';
import { ScrollBox } from '../components/scroll-box';
import { TruncatedPayload } from '../components/truncated-payload';
import { When } from '../components/when';
import { Link, pathTo } from '../router';

/** A lead's timeline on its page: profiles sent and events, latest first, a page at a time. */

/** What an entry is; an erased one names nothing the person sent (its id, its event's name). */
function describe(entry: TimelineEntry): string {
  if (entry.erasedBy) return entry.kind === 'event' ? 'Event' : entry.eventType === 'ProfilesMerged' ? 'Profiles merged' : 'Profile sent';
  if (entry.kind === 'event') return `Event ${entry.eventName ?? '(details not applied yet)'}`;
  const who = entry.userId !== undefined ? `userId ${entry.userId}` : `anonymousId ${entry.anonymousId ?? ''}`;
  return `${entry.eventType === 'ProfilesMerged' ? 'Profiles merged' : 'Profile sent'} (${who})`;
}

/** What the instant of an event is: as sent, the receipt, or all that remains of an erased one. */
function eventTimeTitle(entry: TimelineEntry & { kind: 'event' }): string {
  if (entry.erasedBy) return 'the instant of the event, kept readable when it was erased';
  return entry.eventTime ? `sent as ${entry.eventTime}` : 'no eventTime sent: when it was received';
}

export function Timeline({ license, id }: { license: string; id: string }) {
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
          <table class="data stack">
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
                <tr key={`${entry.trackID}-${index}`} class={entry.erasedBy ? 'erased' : undefined}>
                  <td data-label="Stored">
                    <When at={entry.at} />
                  </td>
                  <td data-label="What">
                    {describe(entry)}
                    {entry.erasedBy ? (
                      <>
                        {' '}
                        <ErasedBadge />
                      </>
                    ) : null}
                  </td>
                  <td class="details" data-label="Details">
                    {entry.kind === 'event' ? (
                      <>
                        {entry.eventTimeUtc ? (
                          // The instant, not the time as sent: a zone-less one is UTC, which a browser reads as its own.
                          <span class="event-time" title={eventTimeTitle(entry)}>
                            at <When at={entry.eventTimeUtc} />{' '}
                          </span>
                        ) : null}
                        {entry.truncated?.eventData ? (
                          <TruncatedPayload
                            license={license}
                            eventId={entry.eventId}
                            marker={entry.truncated.eventData}
                            pick={(event) => event.data.eventData}
                            label={`event data of ${entry.eventName ?? 'the event'}`}
                          />
                        ) : entry.eventData && Object.keys(entry.eventData).length ? (
                          <code>{JSON.stringify(entry.eventData)}</code>
                        ) : null}
                      </>
                    ) : null}
                    {entry.erasedBy ? <ErasedNote erasedBy={entry.erasedBy} compact /> : null}
                  </td>
                  <td data-label="trackID">
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
