import { expect } from 'chai';
import { liveDetailsOf, previewChars, previewOf } from '../projections/track-index/details.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import type { TrackingEvent } from '../src/eventstore/events.js';

/** What the track index keeps of each item for the Live events list. */

const stored = (event: TrackingEvent): RecordedEvent => ({
    ...event,
    id: '00000000-0000-7000-8000-000000000001',
    stream: 's',
    streamPosition: 0,
    globalPosition: 1,
    recordedAt: '2026-01-01T00:00:00.000Z',
    metadata: { accountId: 'a', trackId: '00000000-0000-7000-8000-000000000001', receivedAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
  });

describe('live details of stored items (unit)', () => {
  it('keeps a short payload whole, as JSON text', () => {
    expect(previewOf({ plan: 'pro', seats: 3 })).to.equal('{"plan":"pro","seats":3}');
  });

  it(`cuts a long payload at ${previewChars} characters, ending in …`, () => {
    const text = previewOf({ note: 'x'.repeat(500) });
    expect(text).to.have.length(previewChars);
    expect(text.endsWith('…')).to.equal(true);
    expect(text.startsWith('{"note":"xxx')).to.equal(true);
  });

  it('never cuts between the halves of a character outside the BMP (PostgreSQL refuses a lone half)', () => {
    for (let pad = 0; pad < 4; pad += 1) {
      const text = previewOf({ n: 'a'.repeat(pad) + '😀'.repeat(100) });
      const beforeMark = text.slice(0, -1);
      expect(beforeMark.isWellFormed(), `pad ${pad}`).to.equal(true);
      expect(text.length).to.be.within(previewChars - 1, previewChars);
    }
  });

  it('names the event, the person and the product of each type', () => {
    expect(
      liveDetailsOf(stored({ type: 'EventTracked', data: { userId: 'u1', eventName: 'Viewed', eventTime: null, eventTimeUtc: '2026-01-01T00:00:00.000Z', eventData: { a: 1 } } })),
    ).to.deep.equal({ item_name: 'Viewed', user_id: 'u1', anonymous_id: null, user_ref: null, anonymous_ref: null, product_id: null, preview: '{"a":1}' });
    expect(
      liveDetailsOf(
        stored({
          type: 'ProductEventTracked',
          data: { productId: 'p1', userId: null, eventName: 'Bought', eventTime: null, eventTimeUtc: '2026-01-01T00:00:00.000Z', eventData: {} },
        }),
      ),
    ).to.deep.equal({ item_name: 'Bought', user_id: null, anonymous_id: null, user_ref: null, anonymous_ref: null, product_id: 'p1', preview: '{}' });
    expect(liveDetailsOf(stored({ type: 'ProductSubmitted', data: { productId: 'p2', properties: { price: 3 } } }))).to.deep.equal({
      item_name: null,
      user_id: null,
      anonymous_id: null, user_ref: null, anonymous_ref: null,
      product_id: 'p2',
      preview: '{"price":3}',
    });
    expect(
      liveDetailsOf(stored({ type: 'UserUpserted', data: { anonymousId: 'anon-1', profile: { firstName: 'Ann' }, attributes: { plan: 'pro' }, attributeTypes: { plan: 'string' }, instants: {} } })),
    ).to.deep.equal({ item_name: null, user_id: null, anonymous_id: 'anon-1', user_ref: null, anonymous_ref: null, product_id: null, preview: '{"firstName":"Ann","attributes":{"plan":"pro"}}' });
    expect(liveDetailsOf(stored({ type: 'ProfilesMerged', data: { userId: 'u1', anonymousId: 'anon-1' } }))).to.deep.equal({
      item_name: null,
      user_id: 'u1',
      anonymous_id: 'anon-1', user_ref: null, anonymous_ref: null,
      product_id: null,
      preview: null,
    });
  });

  it("keeps of an erased person's item the pseudonyms of its ids only: no id, name or payload", () => {
    const event = stored({ type: 'EventTracked', data: { eventName: '', eventTime: null, eventTimeUtc: '2026-01-01T00:00:00.000Z', eventData: {} } });
    // As the store reads an erased event: its ids gone, their pseudonyms in their place.
    Object.assign(event.data, { userRef: 'ref-of-u1', anonymousRef: 'ref-of-anon-1' });
    const erased: RecordedEvent = { ...event, erased: { erasureId: '00000000-0000-4000-8000-000000000009', erasedAt: '2026-01-02T00:00:00.000Z' } };
    expect(liveDetailsOf(erased)).to.deep.equal({ item_name: null, user_id: null, anonymous_id: null, user_ref: 'ref-of-u1', anonymous_ref: 'ref-of-anon-1', product_id: null, preview: null });
  });
});
