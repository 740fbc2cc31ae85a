import type { SchemaName } from '../../src/ingest/validation.js';

/**
 * The limits docs/decisions.md promises clients, written out here rather than read from the
 * schemas or the sources, so that a changed limit in either fails the specs that use this list.
 */

/** The INT and INT4 system attributes of docs/spec.md 2.2: integers within the 32-bit range. */
export const intAttributes = ['children', 'number_of_employees', 'annual_revenue', 'points'] as const;
export const int4Min = -2147483648;
export const int4Max = 2147483647;

/** Values an INT attribute refuses: a fraction, a numeric string, and one past each end of the range. */
export const notInt4: readonly unknown[] = [1.5, '3', int4Max + 1, int4Min - 1];

/** The STRING system attributes other than the two ids (docs/decisions.md, Users): at most 10,000 characters. */
export const textAttributes = [
  'firstName', 'lastName', 'email', 'gender', 'maritial_status', 'education', 'title', 'address', 'city', 'state',
  'zipcode', 'country', 'phone', 'job_position', 'company', 'mobile', 'device_type', 'utm_source',
] as const;

/** Placeholder ids refused for userId and anonymousId (docs/decisions.md, Identifiers). */
export const placeholderIds = ['anonymous', 'null', 'undefined', '0', 'guest', '[object Object]', 'nan', 'none'] as const;

export type ItemEndpoint = 'users' | 'events' | 'products' | 'productsevents';

export const schemaOf: Record<ItemEndpoint, SchemaName> = { users: 'user', events: 'event', products: 'product', productsevents: 'product-event' };

/** A documented maximum length of a field of one endpoint's items. */
export interface LengthLimit {
  endpoint: ItemEndpoint;
  /** How the refusal names the field. */
  field: string;
  max: number;
  /** A valid item whose field is `value`. */
  item(value: string): Record<string, unknown>;
}

const base: Record<ItemEndpoint, Record<string, unknown>> = {
  users: { userId: 'u-1', attributes: {} },
  events: { userId: 'u-1', eventName: 'Viewed' },
  products: { productId: 'p-1' },
  productsevents: { productId: 'p-1', userId: 'u-1', eventName: 'Viewed' },
};

const field = (endpoint: ItemEndpoint, name: string, max: number): LengthLimit => ({
  endpoint,
  field: name,
  max,
  item: (value) => ({ ...base[endpoint], [name]: value }),
});

/** Ids: 255 characters (docs/decisions.md, Identifiers); names: events 255, product events 50; texts 10,000; attribute keys 100. */
export const lengthLimits: readonly LengthLimit[] = [
  field('users', 'userId', 255),
  { ...field('users', 'anonymousId', 255), item: (value) => ({ anonymousId: value, attributes: {} }) },
  field('events', 'userId', 255),
  { ...field('events', 'anonymousId', 255), item: (value) => ({ anonymousId: value, eventName: 'Viewed' }) },
  field('events', 'eventName', 255),
  field('products', 'productId', 255),
  field('products', 'userId', 255),
  field('productsevents', 'productId', 255),
  field('productsevents', 'userId', 255),
  field('productsevents', 'eventName', 50),
  ...textAttributes.map((name) => field('users', name, 10_000)),
  { endpoint: 'users', field: 'attribute key', max: 100, item: (value) => ({ userId: 'u-1', attributes: { [value]: 1 } }) },
];

/** Default requests per minute a client sees in RateLimit-Limit (README, Settings). */
export const defaultRateLimits = { productsevents: 10_000, others: 600_000 } as const;
