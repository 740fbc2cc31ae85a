/**
 * The event contract: every event the service stores, with its data, its metadata and its stream
 * (docs/events.md). Ingest builds these types; projections narrow on `type`; the adapters turn
 * stored JSON into them through `fromStored`, the one place to upcast an older schema version.
 */

/** The schema version written into the metadata of every new event. */
export const schemaVersion = 1;

/** Metadata carried by every stored event (docs/events.md, Metadata and event ids). */
export interface EventMetadata {
  trackId: string;
  /** Internal account id, never the license code. */
  accountId: string;
  /** Server time of receipt, ISO 8601 UTC. */
  receivedAt: string;
  schemaVersion: number;
  [key: string]: unknown;
}

/** The type of a custom attribute, decided by its first accepted use (docs/decisions.md, Custom attributes). */
export type AttributeType = 'number' | 'string' | 'boolean' | 'datetime';

export type AttributeValue = string | number | boolean;

/** A user profile as sent: only the keys the client sent. */
export type UserUpsertedData = {
  userId?: string;
  anonymousId?: string;
  /** `firstName`, `lastName` and the system attributes of docs/spec.md 2.2, as sent. */
  profile: Record<string, unknown>;
  attributes: Record<string, AttributeValue>;
  attributeTypes: Record<string, AttributeType>;
  /** The UTC instant of every date-time sent, by field path (`birth_date`, `attributes.last_login`). */
  instants: Record<string, string>;
};

/** An anonymous id merged into a known user, for good. */
export type ProfilesMergedData = {
  userId: string;
  anonymousId: string;
};

/** The time of an event as sent, and its instant. */
export type EventTimes = {
  /** The string sent, or null. */
  eventTime: string | null;
  /** Its UTC instant, or `receivedAt` when none was sent. */
  eventTimeUtc: string;
};

export type EventTrackedData = EventTimes & {
  userId?: string;
  anonymousId?: string;
  eventName: string;
  eventData: Record<string, unknown>;
};

export type ProductSubmittedData = {
  productId: string;
  userId?: string;
  properties: Record<string, unknown>;
};

export type ProductEventTrackedData = EventTimes & {
  productId: string;
  userId: string | null;
  eventName: string;
  eventData: Record<string, unknown>;
};

/** The data of each event type. */
export interface EventDataOf {
  UserUpserted: UserUpsertedData;
  ProfilesMerged: ProfilesMergedData;
  EventTracked: EventTrackedData;
  ProductSubmitted: ProductSubmittedData;
  ProductEventTracked: ProductEventTrackedData;
}

/** Every event type the service stores (docs/events.md, Event types). */
export const eventTypes = ['UserUpserted', 'ProfilesMerged', 'EventTracked', 'ProductSubmitted', 'ProductEventTracked'] as const satisfies readonly (keyof EventDataOf)[];

export type EventType = (typeof eventTypes)[number];

/** The data fields of each event type: docs/events.md names each (test/event-contract.unit.spec.ts). */
export const eventDataFields = {
  UserUpserted: ['userId', 'anonymousId', 'profile', 'attributes', 'attributeTypes', 'instants'],
  ProfilesMerged: ['userId', 'anonymousId'],
  EventTracked: ['userId', 'anonymousId', 'eventName', 'eventTime', 'eventTimeUtc', 'eventData'],
  ProductSubmitted: ['productId', 'userId', 'properties'],
  ProductEventTracked: ['productId', 'userId', 'eventName', 'eventTime', 'eventTimeUtc', 'eventData'],
} as const satisfies { [T in EventType]: readonly (keyof EventDataOf[T])[] };

/** True only when eventDataFields lists every field of every type: a field added to a type and not listed fails to compile. */
export const everyDataFieldListed: { [T in EventType]: Exclude<keyof EventDataOf[T], (typeof eventDataFields)[T][number]> }[EventType] extends never ? true : never = true;

/** One event type with its data: a consumer that narrows on `type` gets the data's type. */
export type TrackingEvent = { [T in EventType]: { type: T; data: EventDataOf[T] } }[EventType];

/** The event (type and data) of one type. */
export type EventOf<T extends EventType> = Extract<TrackingEvent, { type: T }>;

const knownTypes: ReadonlySet<string> = new Set(eventTypes);

export const isEventType = (type: string): type is EventType => knownTypes.has(type);

/** A stored event as its adapter reads it: the type name and the parsed JSON of data and metadata. */
export interface StoredEvent {
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
}

/**
 * The one place where stored JSON becomes the typed contract. Schema version 1 is the only one so
 * far and is passed through as stored; a later version that changes a shape is upcast here.
 */
export function fromStored(stored: StoredEvent): TrackingEvent & { metadata: EventMetadata } {
  if (!isEventType(stored.type)) throw new Error(`not an event type of the service: ${stored.type}`);
  const version = stored.metadata.schemaVersion;
  if (version !== undefined && version !== schemaVersion) {
    throw new Error(`event of schema version ${String(version)}: this version of the service reads version ${schemaVersion}`);
  }
  // Version 1: the shapes above are those stored.
  return { type: stored.type, data: stored.data, metadata: stored.metadata } as TrackingEvent & { metadata: EventMetadata };
}

/**
 * Stream names carry the internal account id, never the license code, and a person's id only as its
 * pseudonym (docs/events.md, Streams; src/eventstore/pseudonyms.ts).
 */
export const streams = {
  user: (accountId: string, userRef: string): string => `user-${accountId}-${userRef}`,
  anonymous: (accountId: string, anonymousRef: string): string => `anonymous-${accountId}-${anonymousRef}`,
  product: (accountId: string, productId: string): string => `product-${accountId}-${productId}`,
};

/** An account's pseudonyms of ids (pseudonyms.ts, IdRefs). */
export interface AccountRefs {
  readonly accountId: string;
  user(userId: string): string;
  anonymous(anonymousId: string): string;
}

/** The stream of a person's events: the known user's when there is a userId, else the anonymous one's. */
export function personStream(refs: AccountRefs, ids: { userId?: string; anonymousId?: string }): string {
  if (ids.userId !== undefined) return streams.user(refs.accountId, refs.user(ids.userId));
  if (ids.anonymousId !== undefined) return streams.anonymous(refs.accountId, refs.anonymous(ids.anonymousId));
  throw new Error('an event of a person needs a userId or an anonymousId');
}
