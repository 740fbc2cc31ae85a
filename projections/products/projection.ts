import type { RecordedEvent } from '../../src/eventstore/port.js';
import type { Db, Projection } from '../runner/projection.js';
import { eventRowOf, writeRows } from '../rows-sql.js';
import { insertProductEvents, upsertProducts } from './sql.js';

interface ProductChange {
  account_id: string;
  product_id: string;
  properties: Record<string, unknown>;
  sent_by_user_id: string | null;
  /** Submissions in this batch. */
  version: number;
  created_position: number;
  created_at: string;
  changed_at: string;
}

/** Products (latest properties, who sent them) and product events. */
export const productsProjection: Projection = {
  name: 'products',
  eventTypes: ['ProductSubmitted', 'ProductEventTracked'],
  tables: ['products', 'product_events'],

  async apply(db: Db, events: RecordedEvent[]): Promise<void> {
    // Submissions of one product in a batch fold into one row change, in event order.
    const products = new Map<string, ProductChange>();
    const productEvents = [];
    for (const event of events) {
      // What an erased person sent leaves no trace here (docs/decisions.md, Erasure).
      if (event.erased) continue;
      const accountId = event.metadata.accountId;
      if (event.type === 'ProductSubmitted') {
        const data = event.data;
        const key = `${accountId}\u0000${data.productId}`;
        const previous = products.get(key);
        products.set(key, {
          account_id: accountId,
          product_id: data.productId,
          properties: data.properties ?? {},
          sent_by_user_id: data.userId ?? null,
          version: (previous?.version ?? 0) + 1,
          created_position: previous?.created_position ?? event.globalPosition,
          created_at: previous?.created_at ?? event.metadata.receivedAt,
          changed_at: event.metadata.receivedAt,
        });
      } else if (event.type === 'ProductEventTracked') {
        productEvents.push({
          event_id: event.id,
          account_id: accountId,
          product_id: event.data.productId,
          user_id: event.data.userId,
          ...eventRowOf(event),
        });
      }
    }
    await writeRows(db, upsertProducts, [...products.values()]);
    await writeRows(db, insertProductEvents, productEvents);
  },
};
