/** The four kinds of item, named as the service's bulk endpoints: `POST /v1/accounts/<license>/<kind>/bulk`. */
export type ItemKind = 'users' | 'events' | 'products' | 'productsevents';

export const itemKinds: readonly ItemKind[] = ['users', 'events', 'products', 'productsevents'];

/** One item's outcome: stored by the service (`queued`, with its trackID), or refused for good. */
export type ItemResult = { status: 'queued'; trackID: string } | { status: 'error'; message: string };

/** A batch as the `idempotencyKey` option sees it: its kind and its items, in enqueue order. */
export interface BatchInfo {
  kind: ItemKind;
  /**
   * The batch's number among the batches of its kind this client cut, from 0. Batches are cut by
   * count and bytes in enqueue order (and by timed flushes unless flushIntervalMs is 0), so the
   * same items queued in the same order with the same options get the same numbers.
   */
  sequence: number;
  items: readonly Record<string, unknown>[];
}

/** What `stats()` answers: items now held, and counters since the client was made. */
export interface ClientStats {
  /** Items waiting to be sent. */
  queued: number;
  /** Items of batches being sent or waiting to be sent again. */
  inFlight: number;
  /** Items the service stored (`queued` results). */
  sent: number;
  /** Items finally failed: refused by the service, or not delivered within `retryForMs`. */
  failed: number;
  /** Attempts that were retries of a batch (a batch sent three times counts 2). */
  retried: number;
}

/** An instant: an ISO 8601 date-time text, or a Date (sent as its ISO text, in UTC). */
export type DateTime = string | Date;

/** At least one of userId and anonymousId (docs/spec.md 2.1). */
type Identity = { userId: string; anonymousId?: string } | { userId?: string; anonymousId: string };

/** A custom attribute's value: the four types of docs/spec.md 2.1 rule 6 are text, number, boolean and date (a date-time text). */
export type AttributeValue = string | number | boolean;

/** A user profile (schemas/user.json): identity, system attributes, and custom `attributes`. */
export type UserProfile = Identity & {
  firstName?: string;
  lastName?: string;
  email?: string;
  birth_date?: DateTime;
  gender?: string;
  maritial_status?: string;
  children?: number;
  education?: string;
  title?: string;
  address?: string;
  city?: string;
  state?: string;
  zipcode?: string;
  country?: string;
  phone?: string;
  job_position?: string;
  company?: string;
  number_of_employees?: number;
  annual_revenue?: number;
  opt_in_sms?: boolean;
  opt_in_email?: boolean;
  mobile?: string;
  last_active?: DateTime;
  updated_at?: DateTime;
  date_identified?: DateTime;
  points?: number;
  device_type?: string;
  utm_source?: string;
  /** Names `^[a-z][a-z0-9_]*$` (at most 100 characters), at most 500 of them. */
  attributes: Record<string, AttributeValue>;
};

/** An event of a user (schemas/event.json). */
export type TrackedEvent = Identity & {
  eventName: string;
  eventTime?: DateTime;
  eventData?: Record<string, unknown>;
};

/** A product (schemas/product.json). */
export type Product = {
  productId: string;
  userId?: string;
  properties?: Record<string, unknown>;
};

/** A product event (schemas/product-event.json): eventName at most 50 characters, eventData at most 25 keys, no null values. */
export type ProductEvent = {
  productId: string;
  userId?: string | null;
  eventName: string;
  eventTime?: DateTime;
  eventData?: Record<string, string | number | boolean | readonly unknown[] | Record<string, unknown>>;
};
