/**
 * Segment's e-commerce events as the spec's product events (docs/segment.md, "E-commerce"). A
 * track whose properties carry a `product_id` (Product Viewed, Product Added, ...) is a product
 * event of that product. A track with a `products` list (Order Completed, Cart Viewed, ...) is an
 * event of the person, and a product event for each listed product that has a `product_id`. The
 * product event command then holds them to the spec's limits (eventName of at most 50 characters,
 * at most 25 properties): past them the message is refused, as the productsevents endpoint would.
 */

/** Properties of a list event that each of its product events also keeps. */
const orderFields = ['order_id', 'checkout_id', 'cart_id', 'currency'] as const;

/** The spec's productId from Segment's product_id (a string, or a number as many shops have). */
const productIdOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined);

/** Product event data holds no null (spec 2.5 rule 1): a property sent as null is left out. */
const withoutNulls = (data: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(data).filter(([, value]) => value !== null && value !== undefined));

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Products of one message's list at most: each is an event of its own. */
export const maxProductsPerMessage = 100;

export class TooManyProducts extends Error {}

interface Item {
  kind: 'events' | 'productsevents';
  item: Record<string, unknown>;
}

/** The items of a commerce track call; null when it is a plain event. */
export function commerceItems(event: string, properties: Record<string, unknown>, person: { userId?: string }, time: { eventTime?: string }): Item[] | null {
  // Product events name a person by userId only (spec 2.5): an anonymous visitor's are nobody's.
  const userId = person.userId ?? null;
  const productEvent = (productId: string, data: Record<string, unknown>): Item => ({
    kind: 'productsevents',
    item: { productId, userId, eventName: event, ...time, eventData: withoutNulls(data) },
  });
  const productId = productIdOf(properties.product_id);
  if (productId !== undefined) return [productEvent(productId, properties)];
  if (!Array.isArray(properties.products)) return null;
  const order = Object.fromEntries(orderFields.flatMap((f) => (properties[f] !== undefined ? [[f, properties[f]]] : [])));
  const items: Item[] = [{ kind: 'events', item: { ...person, eventName: event, ...time, eventData: properties } }];
  if (properties.products.length > maxProductsPerMessage) {
    throw new TooManyProducts(`properties.products holds ${properties.products.length} products: at most ${maxProductsPerMessage} per message`);
  }
  for (const product of properties.products) {
    const id = isObject(product) ? productIdOf(product.product_id) : undefined;
    if (id !== undefined && isObject(product)) items.push(productEvent(id, { ...order, ...product }));
  }
  return items;
}
