import { appendDecisions, metadataFor, rejected, type CommandDeps, type Decision, type IngestContext, type ItemResult } from './context.js';
import { checkIdentities, streams } from './identifiers.js';
import { eventTimes } from './timestamps.js';

/** A product event that passed schemas/product-event.json. */
interface ProductEventItem {
  productId: string;
  userId?: string | null;
  eventName: string;
  eventTime?: string;
  eventData?: Record<string, unknown>;
}

const emptyProductId = 'productId cannot be empty';

function decide(deps: CommandDeps, ctx: IngestContext, item: unknown): Decision {
  // The spec fixes this message for a missing or empty productId, ahead of any other check.
  const productId = (item as { productId?: unknown } | null)?.productId;
  if (productId === undefined || productId === null || (typeof productId === 'string' && productId.trim() === '')) {
    return rejected(emptyProductId, 'schema');
  }
  const validation = deps.validator.validate('product-event', item);
  if (!validation.ok) return rejected(validation.message, 'schema');
  const event = item as ProductEventItem;
  const identity = checkIdentities({ userId: event.userId });
  if (identity) return identity;
  const trackId = ctx.trackIds(0);
  return {
    trackId,
    events: [
      {
        id: trackId,
        stream: streams.product(ctx.accountId, event.productId),
        type: 'ProductEventTracked',
        data: {
          productId: event.productId,
          userId: event.userId ?? null,
          eventName: event.eventName,
          ...eventTimes(event.eventTime, ctx.receivedAt),
          eventData: event.eventData ?? {},
        },
        metadata: metadataFor(ctx, trackId),
      },
    ],
  };
}

export async function ingestProductEvent(deps: CommandDeps, ctx: IngestContext, item: unknown): Promise<ItemResult> {
  const [result] = await appendDecisions(deps.store, [decide(deps, ctx, item)]);
  return result as ItemResult;
}
