/**
 * Request bodies of the bench scenarios, shaped like what an SDK sends. Ids come from a per-request
 * counter: every user is its own stream, so repeating a few ids would measure lock contention on
 * a handful of streams instead of ingest.
 */

// Unique per run, so that ids never meet those of an earlier run against the same database.
const run = Date.now().toString(36);
const eventTime = '2024-05-01T12:30:00.123+02:00';
const plans = ['free', 'pro', 'team', 'enterprise'];
const cities = ['Berlin', 'Lisbon', 'Austin', 'Osaka', 'Lagos'];

/** One profile; custom attributes keep one type per key, as the service requires. */
function user(n: number, userId: string): Record<string, unknown> {
  return {
    userId,
    firstName: 'Ann',
    lastName: `Tester ${n % 1000}`,
    email: `user${n}@example.com`,
    city: cities[n % cities.length],
    country: 'DE',
    opt_in_email: n % 2 === 0,
    points: n % 500,
    last_active: eventTime,
    attributes: {
      membership_level: plans[n % plans.length],
      lifetime_value: (n % 997) * 1.25,
      newsletter: n % 3 === 0,
      signup_source: 'web',
      last_login: '2024-04-30T08:15:00Z',
    },
  };
}

export function userBody(n: number): string {
  return JSON.stringify(user(n, `bench-${run}-u${n}`));
}

/** The n-th event of the person `userId`. */
function event(n: number, userId: string): Record<string, unknown> {
  return {
    userId,
    eventName: ['page_view', 'add_to_cart', 'checkout_started'][n % 3],
    eventTime,
    eventData: { page: `/products/${n % 300}`, referrer: 'google', value: 19.99, items: 1 + (n % 4) },
  };
}

export function eventBody(n: number): string {
  // Events go to a large pool of known users, as they would after sign-up.
  return JSON.stringify(event(n, `bench-${run}-e${n % 50_000}`));
}

/** Single events each naming a person never seen before (`tag` keeps scenarios apart): a person key made per request. */
export function newPersonEventBody(tag: string): (n: number) => string {
  return (n) => JSON.stringify(event(n, `bench-${run}-${tag}-n${n}`));
}

/** Single events over `persons` persons (`tag` names the set). */
export function knownPersonEventBody(tag: string, persons: number): (n: number) => string {
  return (n) => JSON.stringify(event(n, `bench-${run}-${tag}-k${n % persons}`));
}

/** Bulk bodies of `size` events, one per person, naming every one of knownPersonEventBody's `persons` persons once (`persons / size` bodies). */
export function knownPersonsBulkBodies(tag: string, persons: number, size: number): string[] {
  return Array.from({ length: Math.ceil(persons / size) }, (_, b) =>
    JSON.stringify(Array.from({ length: Math.min(size, persons - b * size) }, (_, i) => event(i, `bench-${run}-${tag}-k${b * size + i}`))),
  );
}

export function productEventBody(n: number): string {
  return JSON.stringify({
    productId: `sku-${run}-${n % 5_000}`,
    userId: `bench-${run}-e${n % 50_000}`,
    eventName: ['product_viewed', 'product_added', 'product_purchased'][n % 3],
    eventTime,
    eventData: { price: 49.9, currency: 'EUR', quantity: 1 + (n % 3), category: 'shoes' },
  });
}

function product(productId: string, n: number): Record<string, unknown> {
  return {
    productId,
    userId: `bench-${run}-e${n % 50_000}`,
    properties: { name: `Shoe ${n % 5_000}`, price: 49.9, currency: 'EUR', category: 'shoes', stock: n % 40 },
  };
}

const idMark = '@ID@';

/**
 * Bulk bodies of `size` items, `item(i, mark)` being the i-th with `mark` in its ids. Serialised once
 * and joined at run time with `markOf(request number)`, so that building a 30 kB body costs the
 * load generator little.
 */
function bulkOf(size: number, item: (i: number, mark: string) => Record<string, unknown>, markOf: (n: number) => string): (n: number) => string {
  const parts = JSON.stringify(Array.from({ length: size }, (_, i) => item(i, idMark))).split(idMark);
  return (n) => parts.join(markOf(n));
}

// Pools of 500 bodies for the kinds that write to known streams: 64 requests in flight rarely share
// a stream, whose lock they would queue on.
const pooled = (n: number): string => String(n % 500);

/** The item of each bulk kind, with the mark in its ids. */
const bulkItems = {
  // Every profile new: a stream each, as an import makes them.
  users: (i: number, mark: string) => user(i, `bench-${run}-b${mark}-${i}`),
  // 50,000 known users.
  events: (i: number, mark: string) => ({ ...(JSON.parse(eventBody(i)) as Record<string, unknown>), userId: `bench-${run}-e${mark}-${i}` }),
  // 50,000 products, each submitted again and again.
  products: (i: number, mark: string) => product(`sku-${run}-${mark}-${i}`, i),
  productsevents: (i: number, mark: string) => ({ ...(JSON.parse(productEventBody(i)) as Record<string, unknown>), productId: `sku-${run}-${mark}-${i}` }),
};

export type BulkKind = keyof typeof bulkItems;
export const bulkKinds: BulkKind[] = ['users', 'events', 'products', 'productsevents'];

/** Bulk bodies of `size` items of a kind for request n: users all new, the other kinds over pools. */
export function bulkBodies(kind: BulkKind, size: number): (n: number) => string {
  return bulkOf(size, bulkItems[kind], kind === 'users' ? String : pooled);
}

/** Bulk bodies of `size` events, each naming its own person, over `pool` bodies: `pool * size` persons, each request naming `size` of them. */
export function eventsBulkOverPool(size: number, pool: number): (n: number) => string {
  return bulkOf(size, bulkItems.events, (n) => `p${n % pool}`);
}

/** True when a single-item reply says queued. */
export function queued(body: string): boolean {
  return body.includes('"status":"queued"');
}

/** True when every element of a bulk reply is queued. */
export function allQueued(body: string): boolean {
  return queued(body) && !body.includes('"status":"error"');
}
