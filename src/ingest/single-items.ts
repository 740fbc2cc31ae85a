import { personStream, streams, type AccountRefs, type EventOf, type EventType } from '../eventstore/events.js';
import type { NewEvent } from '../eventstore/port.js';
import { accountLookups, appendDecisions, type CommandDeps, type Decision } from './decisions.js';
import { suppressedIdentity, type SuppressedSet } from './suppressed.js';
import { checkIdentities, emptyProductIdMessage, isEmptyProductId } from './identifiers.js';
import { metadataFor, type IngestContext } from './request.js';
import { rejected, type ItemResult } from './results.js';
import { eventTimes } from './timestamps.js';
import type { SchemaName } from './validation.js';

/** An event that passed schemas/event.json. */
interface EventItem {
  userId?: string;
  anonymousId?: string;
  eventName: string;
  eventTime?: string;
  eventData?: Record<string, unknown>;
}

/** A product that passed schemas/product.json. */
interface ProductItem {
  productId: string;
  userId?: string;
  properties?: Record<string, unknown>;
}

/** A product event that passed schemas/product-event.json. */
interface ProductEventItem {
  productId: string;
  userId?: string | null;
  eventName: string;
  eventTime?: string;
  eventData?: Record<string, unknown>;
}

/** How an endpoint that stores one event per item checks the item and makes its event. */
interface SingleItemRule<Item, T extends EventType> {
  schema: SchemaName;
  /**
   * Where the empty-productId rule applies: 'first' ahead of every other check (docs/spec.md 4.5
   * fixes the reply of a product event without a productId), 'after schema' once the schema holds.
   */
  productId?: 'first' | 'after schema';
  /** The ids that must be usable identities. */
  identities: (item: Item) => Record<string, string | null | undefined>;
  stream: (refs: AccountRefs, item: Item) => string;
  event: (item: Item, ctx: IngestContext) => EventOf<T>;
}

const rule = <Item, T extends EventType>(r: SingleItemRule<Item, T>): SingleItemRule<Item, T> => r;

/** The endpoints of docs/spec.md 4 that store one event per item, and how. */
export const singleItemRules = {
  events: rule<EventItem, 'EventTracked'>({
    schema: 'event',
    identities: (item) => ({ userId: item.userId, anonymousId: item.anonymousId }),
    stream: (refs, item) => personStream(refs, item),
    event: (item, ctx) => ({
      type: 'EventTracked',
      data: {
        ...(item.userId !== undefined && { userId: item.userId }),
        ...(item.anonymousId !== undefined && { anonymousId: item.anonymousId }),
        eventName: item.eventName,
        ...eventTimes(item.eventTime, ctx.receivedAt),
        eventData: item.eventData ?? {},
      },
    }),
  }),
  products: rule<ProductItem, 'ProductSubmitted'>({
    schema: 'product',
    productId: 'after schema',
    identities: (item) => ({ userId: item.userId }),
    stream: (refs, item) => streams.product(refs.accountId, item.productId),
    event: (item) => ({
      type: 'ProductSubmitted',
      data: {
        productId: item.productId,
        ...(item.userId !== undefined && { userId: item.userId }),
        properties: item.properties ?? {},
      },
    }),
  }),
  productsevents: rule<ProductEventItem, 'ProductEventTracked'>({
    schema: 'product-event',
    productId: 'first',
    identities: (item) => ({ userId: item.userId }),
    stream: (refs, item) => streams.product(refs.accountId, item.productId),
    event: (item, ctx) => ({
      type: 'ProductEventTracked',
      data: {
        productId: item.productId,
        userId: item.userId ?? null,
        eventName: item.eventName,
        ...eventTimes(item.eventTime, ctx.receivedAt),
        eventData: item.eventData ?? {},
      },
    }),
  }),
};

export type SingleItemEndpoint = keyof typeof singleItemRules;

const productIdOf = (item: unknown): unknown => (typeof item === 'object' && item !== null ? (item as { productId?: unknown }).productId : undefined);

function decide<Item, T extends EventType>(rule: SingleItemRule<Item, T>, deps: CommandDeps, ctx: IngestContext, item: unknown, index: number, lookups: Lookups): Decision {
  if (rule.productId === 'first' && isEmptyProductId(productIdOf(item))) return rejected(emptyProductIdMessage, 'schema', 'productId');
  const validation = deps.validator.validate(rule.schema, item);
  if (!validation.ok) return rejected(validation.message, 'schema', validation.field);
  // The schema holds: the item has the shape of Item.
  const valid = item as Item;
  if (rule.productId === 'after schema' && isEmptyProductId(productIdOf(item))) return rejected(emptyProductIdMessage, 'schema', 'productId');
  const ids = rule.identities(valid);
  const identity = checkIdentities(ids) ?? suppressedIdentity(lookups.suppressed, lookups.refs, ids);
  if (identity) return identity;
  const trackId = ctx.trackIds(index);
  const event: NewEvent = { ...rule.event(valid, ctx), id: trackId, stream: rule.stream(lookups.refs, valid), metadata: metadataFor(ctx, trackId) };
  return { trackId, events: [event] };
}

/** What every item of a request is checked against. */
interface Lookups {
  suppressed: SuppressedSet;
  refs: AccountRefs;
}

type Decide = (deps: CommandDeps, ctx: IngestContext, item: unknown, index: number, lookups: Lookups) => Decision;

const deciders: Record<SingleItemEndpoint, Decide> = {
  events: (deps, ctx, item, index, lookups) => decide(singleItemRules.events, deps, ctx, item, index, lookups),
  products: (deps, ctx, item, index, lookups) => decide(singleItemRules.products, deps, ctx, item, index, lookups),
  productsevents: (deps, ctx, item, index, lookups) => decide(singleItemRules.productsevents, deps, ctx, item, index, lookups),
};

/**
 * Checks each item of a single-event endpoint (one, or the elements of its bulk request) and
 * stores the events of those that pass in one append: one result per item, in order.
 */
export async function ingestItems(endpoint: SingleItemEndpoint, deps: CommandDeps, ctx: IngestContext, items: unknown[]): Promise<ItemResult[]> {
  return appendDecisions(deps.store, await decideItems(endpoint, deps, ctx, items), ctx.endpoint);
}

/** The decisions of ingestItems, one per item in order, before anything is appended. */
export async function decideItems(endpoint: SingleItemEndpoint, deps: CommandDeps, ctx: IngestContext, items: unknown[]): Promise<Decision[]> {
  const lookups = await accountLookups(deps, ctx.accountId);
  return items.map((item, index) => deciders[endpoint](deps, ctx, item, index, lookups));
}

/** Checks one item of a single-event endpoint and, if it passes, stores its event. */
export async function ingestSingle(endpoint: SingleItemEndpoint, deps: CommandDeps, ctx: IngestContext, item: unknown): Promise<ItemResult> {
  const [result] = await ingestItems(endpoint, deps, ctx, [item]);
  return result as ItemResult;
}
