import type { EventStore } from '../eventstore/port.js';
import type { EventType } from '../eventstore/events.js';
import { encodeExportCursor } from './cursor.js';
import { exportedEvent, kindOf, type ExportedEvent } from './exported-event.js';
import { matchesFilter, type ExportFilter } from './filter.js';

/** Events read from the store at a time: with `pageBytes`, what an export holds in memory. */
export const exportPageEvents = 2000;
export const exportPageBytes = 4 * 1024 * 1024;

export interface ExportPage {
  /** The events of the page the filter keeps, each with its cursor. */
  events: ExportedEvent[];
  /** Events the page read, also those the filter left out. */
  read: number;
  /** Past every event the page looked at, also those the filter left out (null: the start). */
  checkpoint: string | null;
  /** Every event readable when the page was read has been read. */
  atEnd: boolean;
}

const typesOfKind = (kind: ExportFilter['kind']): EventType[] | undefined =>
  kind === undefined ? undefined : (Object.keys(kindOf) as EventType[]).filter((type) => kindOf[type] === kind);

/**
 * One page of an account's events after `checkpoint`, opened, in the store's catch-up order: the
 * order the projections read, which never skips an event committed late by another process, so
 * that a reader resuming at a cursor misses nothing and repeats nothing.
 */
export async function readExportPage(
  store: EventStore,
  accountId: string,
  checkpoint: string | null,
  filter: ExportFilter,
  { limit = exportPageEvents, maxBytes = exportPageBytes, endAt }: { limit?: number; maxBytes?: number; endAt?: number } = {},
): Promise<ExportPage> {
  const types = typesOfKind(filter.kind);
  const page = await store.readAll(checkpoint, limit, { accountId, maxBytes, ...(types && { types }) });
  const events: ExportedEvent[] = [];
  let read = 0;
  let last = checkpoint;
  for (const event of page.events) {
    if (event.position === undefined) throw new Error('the event store gave an event of a catch-up read without its position');
    // An event of a write begun after the export began: the export ends before it.
    if (endAt !== undefined && Date.parse(event.recordedAt) > endAt) return { events, read, checkpoint: last, atEnd: true };
    read += 1;
    last = event.position;
    const exported = exportedEvent(event, encodeExportCursor(event.position));
    if (matchesFilter(filter, exported)) events.push(exported);
  }
  return { events, read, checkpoint: page.checkpoint, atEnd: page.atEnd === true };
}

/**
 * The pages of an export, up to the events stored when it began (those recorded by writes begun
 * since are left to the next export, from its cursor): an export of a busy account ends too. The
 * next page is read while the caller writes one, so that the store and the writing overlap.
 */
export async function* exportPages(store: EventStore, accountId: string, after: string | null, filter: ExportFilter): AsyncGenerator<ExportPage> {
  const endAt = Date.now();
  // A read ahead that fails after the caller stopped reading must not be an unhandled rejection.
  const ahead = (checkpoint: string | null): Promise<ExportPage> => {
    const read = readExportPage(store, accountId, checkpoint, filter, { endAt });
    read.catch(() => undefined);
    return read;
  };
  let next = ahead(after);
  for (;;) {
    const page = await next;
    if (!page.atEnd) next = ahead(page.checkpoint);
    yield page;
    if (page.atEnd) return;
  }
}
