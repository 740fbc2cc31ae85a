import { useEffect, useState } from 'preact/hooks';
import { ApiError, productEvents, type ProductEvent } from '../api';
import { ErrorText } from '../components';
import { ScrollBox } from '../components/scroll-box';
import { TruncatedPayload } from '../components/truncated-payload';
import { When } from '../components/when';
import { Link, pathTo } from '../router';

/** A product's events on its page, latest first, a page at a time. */

/** What the instant of an event is: as sent, or the receipt. */
const eventTimeTitle = (event: ProductEvent): string => (event.eventTime ? `sent as ${event.eventTime}` : 'no eventTime sent: when it was received');

export function ProductEvents({ license, productId }: { license: string; productId: string }) {
  const [events, setEvents] = useState<ProductEvent[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let current = true;
    setEvents(null);
    setError(null);
    productEvents(license, productId).then(
      ({ events: found, nextCursor }) => {
        if (!current) return;
        setEvents(found);
        setNext(nextCursor);
      },
      // 404: the account knows the productId from nothing, events included.
      (failure: unknown) => current && (failure instanceof ApiError && failure.status === 404 ? setEvents([]) : setError(failure)),
    );
    return () => {
      current = false;
    };
  }, [license, productId]);
  const more = () => {
    if (next === null) return;
    setLoadingMore(true);
    productEvents(license, productId, undefined, next)
      .then(({ events: found, nextCursor }) => {
        setEvents((shown) => [...(shown ?? []), ...found]);
        setNext(nextCursor);
      }, setError)
      .finally(() => setLoadingMore(false));
  };

  return (
    <section aria-labelledby="product-events">
      <h2 id="product-events">Product events</h2>
      <ErrorText error={error} />
      {!events ? (
        error ? null : (
          <p role="status">Loading the product events…</p>
        )
      ) : events.length === 0 ? (
        <p>None yet: product events sent to /productsevents for this productId show up here.</p>
      ) : (
        <ScrollBox label="Product events">
          <table class="data stack">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Event</th>
                <th scope="col">Sent by</th>
                <th scope="col">Data</th>
                <th scope="col">trackID</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.eventId}>
                  <td data-label="When">
                    {/* The instant, not the time as sent: a zone-less one is UTC, which a browser reads as its own. */}
                    <span title={eventTimeTitle(event)}>
                      <When at={event.eventTimeUtc} />
                    </span>
                  </td>
                  <td data-label="Event">{event.eventName}</td>
                  <td data-label="Sent by">
                    {event.userId === null ? <span class="none">nobody named</span> : <Link href={pathTo('/leads/:id', { id: event.userId })}>{event.userId}</Link>}
                  </td>
                  <td class="details" data-label="Data">
                    {event.truncated?.eventData ? (
                      <TruncatedPayload
                        license={license}
                        eventId={event.eventId}
                        marker={event.truncated.eventData}
                        pick={(stored) => stored.data.eventData}
                        label={`event data of ${event.eventName}`}
                      />
                    ) : event.eventData && Object.keys(event.eventData).length ? (
                      <code>{JSON.stringify(event.eventData)}</code>
                    ) : (
                      <span class="none">none</span>
                    )}
                  </td>
                  <td data-label="trackID">
                    {event.trackID === null ? (
                      <span class="none">not indexed yet</span>
                    ) : (
                      <Link href={pathTo('/track/:trackID', { trackID: event.trackID })}>
                        <code>{event.trackID}</code>
                      </Link>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {events && next !== null ? (
        <p>
          <button type="button" class="more" onClick={more} disabled={loadingMore}>
            {loadingMore ? 'Loading…' : 'More product events'}
          </button>
        </p>
      ) : null}
    </section>
  );
}
