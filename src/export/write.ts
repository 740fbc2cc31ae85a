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
  /** Events read so far, also those the filters left out. */
  read: number;
  /** Past every event read so far, also those the filter left out: where a later export continues (null: nothing read). */
  cursor: string | null;
}

/** The kind of a CSV export: its columns are that kind's. */
export function csvKindOf(request: Pick<ExportRequest, 'format' | 'filter'>): ExportKind | undefined {
  if (request.format !== 'csv') return undefined;
  if (request.filter.kind === undefined) throw new Error('a CSV export is of one kind');
  return request.filter.kind;
}

/** Where an export's text goes: each write resolves once the destination has taken it. */
export interface ExportSink {
  write(text: string): Promise<void>;
}

/** A stream as a sink: a write waits while the stream is full, and throws once it is closed or failed. */
export function streamSink(out: Writable): ExportSink {
  return {
    async write(text: string): Promise<void> {
      if (out.destroyed || out.writableEnded) throw new Error('the export was cut off: its destination closed');
      if (text === '' || out.write(text)) return;
      await new Promise<void>((resolve, reject) => {
        const settle = (error?: Error): void => {
          out.off('drain', drained);
          out.off('close', closed);
          out.off('error', settle);
          if (error) reject(error);
          else resolve();
        };
        const drained = (): void => settle();
        const closed = (): void => settle(new Error('the export was cut off: its destination closed'));
        out.on('drain', drained);
        out.on('close', closed);
        out.on('error', settle);
      });
    },
  };
}

/**
 * Writes an account's events as `request` selects them to `sink`, page by page (memory bounded by
 * a page, whatever the export's size), up to the events readable when it reached the end. Each
 * event carries its cursor: an export cut off continues from the last one written. `onPage` runs
 * once each page is written (and the CSV header, as page 0), before the next is.
 */
export async function writeExport(
  store: EventStore,
  sink: ExportSink,
  request: ExportRequest,
  onPage?: (progress: ExportProgress) => void | Promise<void>,
): Promise<ExportProgress> {
  const kind = csvKindOf(request);
  const progress: ExportProgress = { events: 0, read: 0, cursor: request.after === null ? null : encodeExportCursor(request.after) };
  if (kind !== undefined && request.header !== false) {
    await sink.write(csvHeader(kind));
    await onPage?.({ ...progress });
  }
  for await (const page of exportPages(store, request.accountId, request.after, request.filter)) {
    await sink.write(kind === undefined ? ndjsonLines(page.events) : csvRows(kind, page.events));
    progress.events += page.events.length;
    progress.read += page.read;
    if (page.checkpoint !== null) progress.cursor = encodeExportCursor(page.checkpoint);
    await onPage?.({ ...progress });
  }
  return progress;
}
