import { keyCacheMs } from '../../src/eventstore/person-keys.js';
import { defaultPageBytes, maxEventsAhead, type EventStore, type ReadAllResult, type ReadFilter } from '../../src/eventstore/port.js';

/** What a projection runner reads the event store with. */
export type CatchUpSource = Pick<EventStore, 'readAll' | 'backlog' | 'mayRepeatEventIds'>;

interface Page {
  read: Promise<ReadAllResult>;
  /** Bytes of data and events of the page, once read. */
  bytes: number;
  events: number;
  /** Until when the page may be handed out: its events were opened with keys read then (below). */
  until: number;
}

/**
 * One catch-up read for the projections of a process: a page read for one projection is kept, and
 * the others, reading the same account from the same checkpoint with the same page size, get it
 * filtered to their event types instead of reading it again. Page boundaries are the same for every filter (a page ends at
 * the last event looked at), so runners that start together keep meeting on the same pages.
 *
 * A kept page stays a correct answer: the catch-up read returns only transactions older than any
 * still running, so nothing can later appear before or among its events. It is kept no longer than
 * a process keeps a person's key (person-keys.ts): a page read before an erasure holds the person's
 * opened data, and a rebuild after it must read them as erased.
 */
export class SharedCatchUp implements CatchUpSource {
  private readonly pages = new Map<string, Page>();
  private keptBytes = 0;
  private keptEvents = 0;
  readonly mayRepeatEventIds: boolean;

  constructor(
    private readonly store: CatchUpSource,
    /** Bytes of data kept at most, over all pages (the page just read is kept whatever its size). */
    private readonly maxBytes = 2 * defaultPageBytes,
    /** Events kept at most, over all pages. */
    private readonly maxEvents = maxEventsAhead,
  ) {
    this.mayRepeatEventIds = store.mayRepeatEventIds ?? false;
  }

  async readAll(checkpoint: string | null, limit: number, filter: ReadFilter = {}): Promise<ReadAllResult> {
    const maxBytes = filter.maxBytes ?? defaultPageBytes;
    const key = `${filter.accountId ?? ''}|${limit}|${maxBytes}|${checkpoint ?? ''}`;
    let page = this.pages.get(key);
    if (page && page.until <= Date.now() && page.events > 0) {
      this.forget(key, page);
      page = undefined;
    }
    if (!page) {
      const read = this.store.readAll(checkpoint, limit, { maxBytes, ...(filter.accountId !== undefined && { accountId: filter.accountId }) });
      const created: Page = { read, bytes: 0, events: 0, until: Date.now() + keyCacheMs };
      page = created;
      this.pages.set(key, created);
      read.then(
        (result) => {
          // Nothing new: the next look must ask the store again.
          if (result.checkpoint === checkpoint) this.pages.delete(key);
          else this.keep(created, result);
        },
        () => this.pages.delete(key),
      );
    }
    const result = await page.read;
    const types = filter.types;
    return { ...result, events: types ? result.events.filter((e) => types.includes(e.type)) : result.events };
  }

  backlog(checkpoint: string | null, filter?: ReadFilter): ReturnType<EventStore['backlog']> {
    return this.store.backlog(checkpoint, filter);
  }

  private keep(page: Page, result: ReadAllResult): void {
    page.bytes = result.bytes;
    page.events = result.events.length;
    this.keptBytes += page.bytes;
    this.keptEvents += page.events;
    // The oldest pages go first (a Map iterates in insertion order); the one just read stays.
    for (const [key, old] of this.pages) {
      if ((this.keptBytes <= this.maxBytes && this.keptEvents <= this.maxEvents) || old === page) break;
      // Still being read: counted once it is.
      if (old.events === 0) continue;
      this.forget(key, old);
    }
  }

  private forget(key: string, page: Page): void {
    this.pages.delete(key);
    this.keptBytes -= page.bytes;
    this.keptEvents -= page.events;
  }
}
