import { schemaVersion, type EventMetadata } from '../eventstore/events.js';
import type { TrackIds } from './track-ids.js';

/** The spec's endpoints and their bulk forms, then Segment's calls (docs/segment.md): its batch, and its single calls together. */
export const endpoints = ['users', 'users/bulk', 'events', 'events/bulk', 'products', 'products/bulk', 'productsevents', 'productsevents/bulk', 'segment', 'segment/batch'] as const;

export type Endpoint = (typeof endpoints)[number];

const endpointNames: ReadonlySet<string> = new Set(endpoints);

export const isEndpoint = (name: string): name is Endpoint => endpointNames.has(name);

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
