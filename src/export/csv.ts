import { stringify } from 'csv-stringify/sync';
import { columnsOf } from './columns.js';
import type { ExportedEvent, ExportKind } from './exported-event.js';

/** The CSV of one kind (RFC 4180): a line of column names, then a row an event; objects as JSON text. */

const cell = (value: unknown): string | number | boolean | null => {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
};

export const csvHeader = (kind: ExportKind): string => stringify([columnsOf[kind].map((column) => column.name)]);

export const csvRows = (kind: ExportKind, events: readonly ExportedEvent[]): string =>
  events.length === 0 ? '' : stringify(events.map((event) => columnsOf[kind].map((column) => cell(column.value(event)))));
