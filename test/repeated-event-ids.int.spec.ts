import { expect } from 'chai';
import { schemaVersion, streams, type EventOf, type TrackingEvent } from '../src/eventstore/events.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import { leadsProjection } from '../projections/leads/projection.js';
import { productsProjection } from '../projections/products/projection.js';
import { trackIndexProjection } from '../projections/track-index/projection.js';
import { userEventsProjection } from '../projections/user-events/projection.js';
import { testRefs } from './support/ingest-doubles.js';
import { projectionSpec } from './support/projection-spec.js';

/**
 * Every read model applies an event id once, however often the store delivers it: EventStoreDB
 * can store an id a second time further on in its stream (docs/eventstoredb.md), and the runner
 * then hands both copies over. The givens hold the same event twice, as such a store delivers it.
 */

const account = '55555555-5555-4555-8555-555555555555';
let position = 0;

/** An event as the store returns it, at the next global position, received one second after the last. */
function recorded(event: TrackingEvent, stream: string, streamPosition: number): RecordedEvent {
  position += 1;
  const id = `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
  const receivedAt = new Date(Date.UTC(2024, 0, 1, 0, 0, position)).toISOString();
  return { ...event, id, stream, streamPosition, globalPosition: position, metadata: { trackId: id, accountId: account, receivedAt, schemaVersion }, recordedAt: receivedAt };
}

/** The same event stored again at `streamPosition` of its stream, later in the store's order. */
function copyOf(event: RecordedEvent, streamPosition: number): RecordedEvent {
  position += 1;
  return { ...event, streamPosition, globalPosition: position, recordedAt: new Date(Date.UTC(2024, 0, 1, 0, 0, position)).toISOString() };
}

const userStream = streams.user(account, testRefs(account).user('u-1'));
const productStream = streams.product(account, 'p-1');

const upserted = (profile: Record<string, string>, at: number): RecordedEvent =>
  recorded({ type: 'UserUpserted', data: { userId: 'u-1', profile, attributes: {}, attributeTypes: {}, instants: {} } }, userStream, at);

const merged = (at: number): RecordedEvent => recorded({ type: 'ProfilesMerged', data: { userId: 'u-1', anonymousId: 'a-1' } }, userStream, at);

const tracked = (eventName: string, at: number): RecordedEvent =>
  recorded({ type: 'EventTracked', data: { userId: 'u-1', eventName, eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} } }, userStream, at);

const submitted = (properties: Record<string, unknown>, at: number): RecordedEvent =>
  recorded({ type: 'ProductSubmitted', data: { productId: 'p-1', properties } }, productStream, at);

const viewed = (at: number): RecordedEvent => {
  const event: EventOf<'ProductEventTracked'> = {
    type: 'ProductEventTracked',
    data: { productId: 'p-1', userId: null, eventName: 'view', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} },
  };
  return recorded(event, productStream, at);
};

const repeating = { mayRepeatEventIds: true };

describe('read models on a store that delivers an event id twice (given/when/then, int)', () => {
  it('leads: a repeated upsert or merge counts once and does not bring back older values, within a batch or across batches', async () => {
    const ann = upserted({ firstName: 'Ann' }, 0);
    const anna = upserted({ firstName: 'Anna' }, 1);
    const merge = merged(2);
    await projectionSpec(leadsProjection, repeating)
      .given(ann, anna, merge, copyOf(ann, 3))
      .when(copyOf(ann, 4), copyOf(merge, 5))
      .then(async (read) => {
        const rows = await read('SELECT profile_kind, first_name, version, anonymous_ids FROM leads ORDER BY profile_kind');
        expect(rows).to.deep.equal([{ profile_kind: 'user', first_name: 'Anna', version: 3, anonymous_ids: ['a-1'] }]);
      });
  });

  it('products: a repeated submission counts once and does not bring back older properties; a repeated product event is stored once', async () => {
    const red = submitted({ color: 'red' }, 0);
    const view = viewed(1);
    await projectionSpec(productsProjection, repeating)
      .given(red, submitted({ color: 'blue' }, 2), view, copyOf(red, 3), copyOf(view, 4))
      .when(copyOf(red, 5))
      .then(async (read) => {
        expect(await read('SELECT properties, version FROM products')).to.deep.equal([{ properties: { color: 'blue' }, version: 2 }]);
        expect(await read('SELECT event_id, global_position::int AS global_position FROM product_events')).to.deep.equal([
          { event_id: view.id, global_position: view.globalPosition },
        ]);
      });
  });

  it('user events: a repeated event is stored once, at its first copy', async () => {
    const login = tracked('login', 0);
    await projectionSpec(userEventsProjection, repeating)
      .given(login, tracked('logout', 1), copyOf(login, 2))
      .when(copyOf(login, 3))
      .then(async (read) => {
        const rows = await read<{ event_name: string; global_position: number }>('SELECT event_name, global_position::int AS global_position FROM user_events ORDER BY global_position');
        expect(rows.map((r) => r.event_name)).to.deep.equal(['login', 'logout']);
        expect(rows[0]?.global_position).to.equal(login.globalPosition);
      });
  });

  it('track index: one row per event id, at its first copy; each later copy recorded once as a repeat of it, a second delivery of a copy adding nothing', async () => {
    const login = tracked('login', 0);
    const logout = tracked('logout', 1);
    const second = copyOf(login, 2);
    const third = copyOf(login, 3);
    await projectionSpec(trackIndexProjection, repeating)
      .given(login, logout, second)
      .when(third, second, login)
      .then(async (read) => {
        const indexed = await read<{ event_id: string; stream_position: number }>('SELECT event_id, stream_position::int AS stream_position FROM track_index ORDER BY indexed_order');
        expect(indexed).to.deep.equal([
          { event_id: login.id, stream_position: 0 },
          { event_id: logout.id, stream_position: 1 },
        ]);
        const repeats = await read('SELECT event_id, stream_name, stream_position::int AS stream_position, global_position::int AS global_position FROM track_index_repeats ORDER BY global_position');
        expect(repeats).to.deep.equal([
          { event_id: login.id, stream_name: userStream, stream_position: 2, global_position: second.globalPosition },
          { event_id: login.id, stream_name: userStream, stream_position: 3, global_position: third.globalPosition },
        ]);
      });
  });
});
