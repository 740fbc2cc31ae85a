import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { EventStore } from '../eventstore/port.js';
import { csvHeader, csvRows } from './csv.js';
import { encodeExportCursor } from './cursor.js';
import type { ExportKind } from './exported-event.js';
import type { ExportFilter } from './filter.js';
import { ndjsonLines } from './ndjson.js';
import { exportPages } from './pages.js';

export const exportFormats = ['ndjson', 'csv'] as const;
export type ExportFormat = (typeof exportFormats)[number];

export const isExportFormat = (format: string): format is ExportFormat => (exportFormats as readonly string[]).includes(format);

export interface ExportRequest {
  accountId: string;
  /** The checkpoint to continue after (a cursor decoded), or null from the start. */
  after: string | null;
  filter: ExportFilter;
  format: ExportFormat;
  /** CSV: the line of column names first (a continuation appended to a file leaves it out). */
  header?: boolean;
}

export interface ExportProgress {
  /** Events written so far. */
  events: number;
  /** Past every event read so far, also those the filter left out: where a later export continues (null: nothing read). */
  cursor: string | null;
}

/** The kind of a CSV export: its columns are that kind's. */
export function csvKindOf(request: Pick<ExportRequest, 'format' | 'filter'>): ExportKind | undefined {
  if (request.format !== 'csv') return undefined;
  if (request.filter.kind === undefined) throw new Error('a CSV export is of one kind');
  return request.filter.kind;
}

/** Writes `text`, waiting while `out` is full; throws once `out` is closed or failed. */
async function written(out: Writable, text: string): Promise<void> {
  if (out.destroyed || out.writableEnded) throw new Error('the export was cut off: its destination closed');
  if (text === '' || out.write(text)) return;
  const drained = once(out, 'drain');
  const closed = once(out, 'close').then(() => {
    throw new Error('the export was cut off: its destination closed');
  });
  await Promise.race([drained, closed]);
  closed.catch(() => undefined);
}

/**
 * Writes an account's events as `request` selects them to `out`, page by page (memory bounded by
 * a page, whatever the export's size), up to the events readable when it reached the end; does not
 * end `out`. Each event carries its cursor: an export cut off continues from the last one written.
 */
export async function writeExport(store: EventStore, out: Writable, request: ExportRequest, onPage?: (progress: ExportProgress) => void): Promise<ExportProgress> {
  const kind = csvKindOf(request);
  const progress: ExportProgress = { events: 0, cursor: request.after === null ? null : encodeExportCursor(request.after) };
  if (kind !== undefined && request.header !== false) await written(out, csvHeader(kind));
  for await (const page of exportPages(store, request.accountId, request.after, request.filter)) {
    await written(out, kind === undefined ? ndjsonLines(page.events) : csvRows(kind, page.events));
    progress.events += page.events.length;
    if (page.checkpoint !== null) progress.cursor = encodeExportCursor(page.checkpoint);
    onPage?.({ ...progress });
  }
  return progress;
}
