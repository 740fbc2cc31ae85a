import { appendDecisions, metadataFor, rejected, type CommandDeps, type Decision, type IngestContext, type ItemResult } from './context.js';
import { checkIdentities, streams } from './identifiers.js';

/** A product that passed schemas/product.json. */
interface ProductItem {
  productId: string;
  userId?: string;
  properties?: Record<string, unknown>;
}

function decide(deps: CommandDeps, ctx: IngestContext, item: unknown): Decision {
  const validation = deps.validator.validate('product', item);
  if (!validation.ok) return rejected(validation.message, 'schema');
  const product = item as ProductItem;
  if (product.productId.trim() === '') return rejected('productId cannot be empty', 'schema');
  const identity = checkIdentities({ userId: product.userId });
  if (identity) return identity;
  const trackId = ctx.trackIds(0);
  return {
    trackId,
    events: [
      {
        id: trackId,
        stream: streams.product(ctx.accountId, product.productId),
        type: 'ProductSubmitted',
        data: {
          productId: product.productId,
          ...(product.userId !== undefined && { userId: product.userId }),
          properties: product.properties ?? {},
        },
        metadata: metadataFor(ctx, trackId),
      },
    ],
  };
}

export async function ingestProduct(deps: CommandDeps, ctx: IngestContext, item: unknown): Promise<ItemResult> {
  const [result] = await appendDecisions(deps.store, [decide(deps, ctx, item)]);
  return result as ItemResult;
}
