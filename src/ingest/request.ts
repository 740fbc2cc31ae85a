import { schemaVersion, type EventMetadata } from '../eventstore/events.js';
import type { TrackIds } from './track-ids.js';

export type Endpoint = 'users' | 'users/bulk' | 'events' | 'events/bulk' | 'products' | 'products/bulk' | 'productsevents' | 'productsevents/bulk';

/** What a command knows about the request it serves. */
export interface IngestContext {
  accountId: string;
  endpoint: Endpoint;
  /** Server time of receipt, ISO 8601 UTC. */
  receivedAt: string;
  trackIds: TrackIds;
}

/** The metadata of an event stored for this request. */
export function metadataFor(ctx: IngestContext, trackId: string): EventMetadata {
  return { trackId, accountId: ctx.accountId, receivedAt: ctx.receivedAt, schemaVersion };
}
