import type { Excerpt } from '../ingest/excerpt.js';
import type { Endpoint } from '../ingest/request.js';

/** An item an account's ingest refused: what the client was told, and what it sent. */
export interface RejectedItem {
  endpoint: Endpoint;
  reason: string;
  /** The top-level field it is about (src/ingest/results.ts, `rejected`); '' for the request or item as a whole. */
  field: string;
  /** The HTTP status of the reply (200 for an element of a bulk request). */
  status: number;
  message: string;
  /** Null when nothing of the body was read (413 over the declared length, 415, 429). */
  excerpt: Excerpt | null;
  /** The library that sent it, as its message names itself (a Segment message's context.library: `@segment/analytics-node 3.1.0`). */
  client?: string;
}
