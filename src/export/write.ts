import type { Writable } from 'node:stream';
import type { EventStore } from '../eventstore/port.js';
import { csvHeader, csvRows } from './csv.js';
import { encodeExportCursor } from './cursor.js';
import type { ExportedEvent, ExportKind } from './exported-event.js';
import type { ExportFilter } from './filter.js';
import { ndjsonLines } from './ndjson.js';
import { exportPages } from './pages.js';
import { ParquetExport } from './parquet.js';

export const exportFormats = ['ndjson', 'csv', 'parquet'] as const;
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

/** The formats of one kind a row (CSV, Parquet): their columns are that kind's (columns.ts). */
export const formatsOfOneKind: readonly ExportFormat[] = ['csv', 'parquet'];

type Chunk = string | Uint8Array;

/** How one format writes an export: its start, a page of events, and its end. */
interface Encoder {
  start(): Chunk;
  page(events: readonly ExportedEvent[]): Chunk;
  end(): Chunk;
}

function encoderOf(request: Pick<ExportRequest, 'format' | 'filter' | 'header'>): Encoder {
  if (request.format === 'ndjson') return { start: () => '', page: ndjsonLines, end: () => '' };
  const kind: ExportKind | undefined = request.filter.kind;
  if (kind === undefined) throw new Error(`a ${request.format} export is of one kind`);
  if (request.format === 'csv') return { start: () => (request.header === false ? '' : csvHeader(kind)), page: (events) => csvRows(kind, events), end: () => '' };
  const file = new ParquetExport(kind);
  return { start: () => file.start(), page: (events) => file.rows(events), end: () => file.end() };
}

/** Where an export's text goes: each write resolves once the destination has taken it. */
export interface ExportSink {
  write(chunk: string | Uint8Array): Promise<void>;
}

/** A stream as a sink: a write waits while the stream is full, and throws once it is closed or failed. */
export function streamSink(out: Writable): ExportSink {
  return {
    async write(chunk: string | Uint8Array): Promise<void> {
      if (out.destroyed || out.writableEnded) throw new Error('the export was cut off: its destination closed');
      if (chunk.length === 0 || out.write(chunk)) return;
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
 * a page, whatever the export's size), up to the events stored when it began (pages.ts). Each
 * event carries its cursor: an export cut off continues from the last one written. `onPage` runs
 * once each page is written (and a format's start, as page 0), before the next is.
 */
export async function writeExport(
  store: EventStore,
  sink: ExportSink,
  request: ExportRequest,
  onPage?: (progress: ExportProgress) => void | Promise<void>,
): Promise<ExportProgress> {
  const encoder = encoderOf(request);
  const progress: ExportProgress = { events: 0, read: 0, cursor: request.after === null ? null : encodeExportCursor(request.after) };
  const start = encoder.start();
  if (start.length > 0) {
    await sink.write(start);
    await onPage?.({ ...progress });
  }
  for await (const page of exportPages(store, request.accountId, request.after, request.filter)) {
    await sink.write(encoder.page(page.events));
    progress.events += page.events.length;
    progress.read += page.read;
    if (page.checkpoint !== null) progress.cursor = encodeExportCursor(page.checkpoint);
    await onPage?.({ ...progress });
  }
  await sink.write(encoder.end());
  return progress;
}
