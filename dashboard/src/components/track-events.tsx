import type { ListedStoredEvent, StoredAt, TrackLookup } from '../api';
import { ErasedBadge, ErasedNote, readableRemains } from './erased';
import { instantText } from './format';
import { JsonText } from './json-text';
import { TruncatedPayload } from './truncated-payload';
import { When } from './when';

/** An event's data or metadata: as JSON text, or, when the lookup left it out, its marker and a button to load it. */
function Part({ license, event, part, label }: { license: string; event: ListedStoredEvent; part: 'data' | 'metadata'; label?: string }) {
  const marker = event.truncated?.[part];
  if (!marker) return <JsonText value={event[part]} label={label} />;
  return <TruncatedPayload license={license} eventId={event.eventId} marker={marker} pick={(full) => full[part]} label={label ?? `${part} of ${event.type}`} />;
}

/**
 * What the store keeps of one trackID: each event (type, stream, positions, time, data and
 * metadata as JSON text), then each of their streams up to them, the trackID's own events marked.
 * An event id stored more than once is shown once, with where its later copies are, as text.
 * `level` is the heading level of its parts (3 on the track lookup page, 4 in a panel).
 */
export function TrackEvents({ license, lookup, level = 2 }: { license: string; lookup: TrackLookup; level?: 2 | 3 }) {
  const Heading = level === 2 ? 'h2' : 'h3';
  const Sub = level === 2 ? 'h3' : 'h4';
  const own = new Set(lookup.events.map((event) => event.eventId));
  const streams = Object.entries(lookup.streams);
  return (
    <div class="track-events">
      <Heading>
        {lookup.events.length === 1 ? 'Stored event' : `Stored events (${lookup.events.length})`} of trackID <code>{lookup.trackID}</code>
      </Heading>
      {lookup.events.map((event) => (
        <article class="stored-event" key={event.eventId} aria-label={`${event.type} in ${event.stream}`}>
          <Sub>{event.type}</Sub>
          {event.erasedBy ? <ErasedNote erasedBy={event.erasedBy} /> : null}
          <dl class="facts">
            <dt>Stream</dt>
            <dd>
              <code>{event.stream}</code>
            </dd>
            <dt>Stream position</dt>
            <dd>{event.streamPosition}</dd>
            <dt>Global position</dt>
            <dd>{event.globalPosition}</dd>
            <dt>Recorded</dt>
            <dd><When at={event.recordedAt} /></dd>
            <dt>Event id</dt>
            <dd>
              <code>{event.eventId}</code>
            </dd>
            {event.alsoStoredAt ? (
              <>
                <dt>Also stored at</dt>
                <dd class="also-stored-at">
                  {event.alsoStoredAt.map(placeText).join('; ')} (later copies of the same event id, counted once)
                </dd>
              </>
            ) : null}
          </dl>
          {event.erasedBy && event.data ? (
            <>
              <p class="json-label">data: erased, what remains readable</p>
              <JsonText value={readableRemains(event.data)} label={`what remains readable of the data of ${event.type}`} />
            </>
          ) : (
            <>
              <p class="json-label">data</p>
              <Part license={license} event={event} part="data" label={`data of ${event.type}`} />
            </>
          )}
          <p class="json-label">metadata</p>
          <Part license={license} event={event} part="metadata" label={`metadata of ${event.type}`} />
        </article>
      ))}
      <Heading>Streams up to these events</Heading>
      {streams.length === 0 ? <p>No stream.</p> : null}
      {streams.map(([stream, events]) => (
        <StreamTable key={stream} license={license} stream={stream} events={events} own={own} Sub={Sub} />
      ))}
    </div>
  );
}

/** Where a copy is, as text. */
const placeText = (at: StoredAt): string => `stream ${at.stream}, position ${at.streamPosition}, global position ${at.globalPosition}, recorded ${instantText(at.recordedAt)}`;

function StreamTable({ license, stream, events, own, Sub }: { license: string; stream: string; events: ListedStoredEvent[]; own: Set<string>; Sub: 'h3' | 'h4' }) {
  const first = events[0]?.streamPosition ?? 0;
  return (
    <section class="stream" aria-label={`Stream ${stream}`}>
      <Sub>
        <code>{stream}</code>
      </Sub>
      {first > 0 ? <p class="hint">From stream position {first}: the events before it are not shown.</p> : null}
      <div class="table-box" tabIndex={0} role="region" aria-label={`Events of stream ${stream}`}>
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Stream position</th>
              <th scope="col">Global position</th>
              <th scope="col">Type</th>
              <th scope="col">Recorded</th>
              <th scope="col">This trackID</th>
              <th scope="col">Data</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              // Keyed by position: a stream can hold an event id twice.
              <tr key={event.streamPosition} class={own.has(event.eventId) ? 'own' : undefined}>
                <td data-label="Stream position">{event.streamPosition}</td>
                <td data-label="Global position">{event.globalPosition}</td>
                <td data-label="Type">
                  {event.type}
                  {event.repeatOf ? <span class="repeat-of"> (repeat of stream position {event.repeatOf.streamPosition})</span> : null}
                  {event.alsoStoredAt ? <span class="also-stored-at"> (also stored at {event.alsoStoredAt.map((at) => at.streamPosition).join(', ')})</span> : null}
                  {event.erasedBy ? <> <ErasedBadge /></> : null}
                </td>
                <td data-label="Recorded"><When at={event.recordedAt} /></td>
                <td data-label="This trackID">{own.has(event.eventId) ? 'yes' : ''}</td>
                <td data-label="Data" class={event.erasedBy ? 'erased' : undefined}>
                  {event.erasedBy ? (
                    <ErasedNote erasedBy={event.erasedBy} compact />
                  ) : (
                    <details>
                      <summary>data</summary>
                      <Part license={license} event={event} part="data" />
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
