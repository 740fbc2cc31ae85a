import { expect } from 'chai';
import { schemaVersion, streams, type EventOf } from '../src/eventstore/events.js';
import type { RecordedEvent } from '../src/eventstore/port.js';
import { productsProjection } from '../projections/products/projection.js';
import { projectionSpec } from './support/projection-spec.js';

const account = '33333333-3333-4333-8333-333333333333';
let position = 0;

/** An event as the store returns it, at the next global position, received one second after the last. */
function recorded(event: EventOf<'ProductSubmitted'> | EventOf<'ProductEventTracked'>): RecordedEvent {
  position += 1;
  const id = `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`;
  const receivedAt = new Date(Date.UTC(2024, 0, 1, 0, 0, position)).toISOString();
  return {
    ...event,
    id,
    stream: streams.product(account, event.data.productId),
    streamPosition: 0,
    globalPosition: position,
    metadata: { trackId: id, accountId: account, receivedAt, schemaVersion },
    recordedAt: receivedAt,
  };
}

const submitted = (productId: string, properties: Record<string, unknown>, userId?: string): RecordedEvent =>
  recorded({ type: 'ProductSubmitted', data: { productId, ...(userId !== undefined && { userId }), properties } });

const viewed = (productId: string): RecordedEvent =>
  recorded({
    type: 'ProductEventTracked',
    data: { productId, userId: null, eventName: 'view', eventTime: null, eventTimeUtc: '2024-01-01T00:00:00.000Z', eventData: {} },
  });

describe('products projection (given/when/then, int)', () => {
  it('keeps the latest submission, who sent it, and counts every submission, across batches', async () => {
    const first = submitted('p1', { color: 'red' }, 'u1');
    await projectionSpec(productsProjection)
      .given(first, submitted('p1', { color: 'green' }))
      .when(submitted('p1', { color: 'blue' }, 'u2'))
      .then(async (read) => {
        const rows = await read<{ properties: unknown; sent_by_user_id: string | null; version: number; created_position: number }>(
          'SELECT properties, sent_by_user_id, version, created_position FROM products',
        );
        expect(rows).to.deep.equal([{ properties: { color: 'blue' }, sent_by_user_id: 'u2', version: 3, created_position: first.globalPosition }]);
      });
  });

  it('stores each product event once, however often it is applied', async () => {
    const view = viewed('p1');
    await projectionSpec(productsProjection)
      .given(view)
      .when(view)
      .then(async (read) => {
        expect(await read('SELECT event_id, product_id, event_name FROM product_events')).to.deep.equal([
          { event_id: view.id, product_id: 'p1', event_name: 'view' },
        ]);
      });
  });
});
