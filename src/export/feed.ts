import type { EventStore } from '../eventstore/port.js';
import { encodeExportCursor } from './cursor.js';
import type { ExportedEvent } from './exported-event.js';
import { readExportPage } from './pages.js';

export interface FeedPage {
  events: ExportedEvent[];
  /** Give it back as `after` for the events past these (also past events a filter did not keep). */
  next: string | null;
  /** Every event readable now was given: a reader may wait before asking again. */
  atEnd: boolean;
}

export interface FeedRequest {
  accountId: string;
  after: string | null;
  limit: number;
  /** Bytes of event data the page holds at most past its first event. */
  maxBytes: number;
  /** How long to wait for a first event when there is none yet (a long poll), in ms; 0: answer at once. */
  waitMs: number;
}

/** Ends a long poll's wait: an append of the account (in this process) or a tick that looks again. */
export interface FeedWaits {
  /** True once the process stops: long polls answer at once. */
  readonly stopped: boolean;
  /** Resolves at the next append of this account's events in this process, or after `ms`, or when `signal` aborts. */
  next(accountId: string, ms: number, signal: AbortSignal): Promise<void>;
}

/**
 * When a long poll looks again for events appended by another process (this process's appends wake
 * it at once): soon, then less often, so that idle polls cost the store little.
 */
const firstLookAgainMs = 250;
const lastLookAgainMs = 1_000;

/**
 * The account's events after a cursor, in the store's catch-up order (gap-safe, as the
 * projections read), up to `limit` and `maxBytes`; with none yet, waits up to `waitMs` for some.
 */
export async function readFeed(store: EventStore, waits: FeedWaits, request: FeedRequest, signal: AbortSignal): Promise<FeedPage> {
  const deadline = Date.now() + request.waitMs;
  let checkpoint = request.after;
  let lookAgainMs = firstLookAgainMs;
  for (;;) {
    const page = await readExportPage(store, request.accountId, checkpoint, {}, { limit: request.limit, maxBytes: request.maxBytes });
    checkpoint = page.checkpoint;
    const left = deadline - Date.now();
    if (page.events.length > 0 || !page.atEnd || left <= 0 || signal.aborted || waits.stopped) {
      return { events: page.events, next: checkpoint === null ? null : encodeExportCursor(checkpoint), atEnd: page.atEnd };
    }
    await waits.next(request.accountId, Math.min(left, lookAgainMs), signal);
    lookAgainMs = Math.min(lookAgainMs * 2, lastLookAgainMs);
  }
}
