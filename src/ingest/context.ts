import type { EventMetadata, EventStore, NewEvent } from '../eventstore/port.js';
import type { TrackIds } from './track-ids.js';
import type { Validator } from './validation.js';

export type Endpoint = 'users' | 'users/bulk' | 'events' | 'products' | 'productsevents';

export const schemaVersion = 1;

/** What a command knows about the request it serves. */
export interface IngestContext {
  accountId: string;
  endpoint: Endpoint;
  /** Server time of receipt, ISO 8601 UTC. */
  receivedAt: string;
  trackIds: TrackIds;
}

export type ItemResult =
  | { status: 'queued'; trackID: string }
  | { status: 'error'; message: string; reason: RejectReason };

export type RejectReason = 'schema' | 'identity' | 'datetime' | 'attribute_type' | 'merge_conflict';

export const rejected = (message: string, reason: RejectReason): ItemResult => ({ status: 'error', message, reason });

export function metadataFor(ctx: IngestContext, trackId: string): EventMetadata {
  return { trackId, accountId: ctx.accountId, receivedAt: ctx.receivedAt, schemaVersion };
}

/** A decision: the events to store for an item, or why it is rejected. */
export type Decision = { events: NewEvent[]; trackId: string } | ItemResult;

export interface CommandDeps {
  store: EventStore;
  validator: Validator;
}

/**
 * Appends the events of every accepted item and answers each item in order: one atomic unit on
 * Postgres; on EventStoreDB one atomic write per stream (docs/eventstoredb.md).
 */
export async function appendDecisions(store: EventStore, decisions: Decision[]): Promise<ItemResult[]> {
  const events = decisions.flatMap((d) => ('events' in d ? d.events : []));
  await store.append(events);
  return decisions.map((d) => ('events' in d ? { status: 'queued', trackID: d.trackId } : d));
}
