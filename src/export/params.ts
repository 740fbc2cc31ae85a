import { badRequest } from '../errors.js';
import type { EventStore } from '../eventstore/port.js';
import { decodeExportCursor } from './cursor.js';
import { exportKinds, isExportKind } from './exported-event.js';
import type { ExportFilter } from './filter.js';
import { exportFormats, formatsOfOneKind, isExportFormat, type ExportFormat } from './write.js';

/**
 * The parameters of an export as the read API's query and the CLI's options give them (the same
 * names), checked once here: each wrong one is refused naming it (400 over HTTP, exit 2 in the CLI).
 */

/** A parameter by its name: its text, or undefined when not given. */
export type ParamText = (name: string) => string | undefined;

export interface ExportParams {
  format: ExportFormat;
  filter: ExportFilter;
  /** The checkpoint to continue after, or null from the start. */
  after: string | null;
  header: boolean;
}

/** ISO 8601 UTC date-times, as the service writes them, or a date alone (midnight UTC). */
const instantPattern = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

const given = (text: string | undefined): string | undefined => (text === undefined || text === '' ? undefined : text);

function instantOf(param: ParamText, name: string): string | undefined {
  const text = given(param(name));
  if (text === undefined) return undefined;
  if (!instantPattern.test(text) || Number.isNaN(Date.parse(text))) throw badRequest(`${name} must be an ISO 8601 date or date-time, such as 2026-11-01 or 2026-11-01T12:00:00Z`);
  return new Date(Date.parse(text)).toISOString();
}

/** A cursor given back (`after`): the store checkpoint it holds. */
export function afterOf(param: ParamText, store: Pick<EventStore, 'comparePositions'>): string | null {
  const text = given(param('after'));
  if (text === undefined) return null;
  const checkpoint = decodeExportCursor(store, text);
  if (checkpoint === null) throw badRequest('after is not a cursor this service gave out');
  return checkpoint;
}

export function exportFilterOf(param: ParamText): ExportFilter {
  const kind = given(param('kind'));
  if (kind !== undefined && !isExportKind(kind)) throw badRequest(`kind must be one of ${exportKinds.join(', ')}`);
  const time = given(param('time'));
  if (time !== undefined && time !== 'received' && time !== 'event') throw badRequest('time must be received or event');
  const name = given(param('name'));
  const person = given(param('user'));
  for (const [field, value] of [['name', name], ['user', person]] as const) {
    if (value !== undefined && value.length > 1000) throw badRequest(`${field} must be at most 1000 characters`);
  }
  const from = instantOf(param, 'from');
  const to = instantOf(param, 'to');
  return { ...(kind && { kind }), ...(name && { name }), ...(person && { person }), ...(time && { time }), ...(from && { from }), ...(to && { to }) };
}

export function exportParamsOf(param: ParamText, store: Pick<EventStore, 'comparePositions'>): ExportParams {
  const format = given(param('format')) ?? 'ndjson';
  if (!isExportFormat(format)) throw badRequest(`format must be one of ${exportFormats.join(', ')}`);
  const filter = exportFilterOf(param);
  if (formatsOfOneKind.includes(format) && filter.kind === undefined) throw badRequest(`kind is required with format=${format}, whose columns are those of one kind: ${exportKinds.join(', ')}`);
  const header = param('header') ?? 'true';
  if (header !== 'true' && header !== 'false') throw badRequest('header must be true or false');
  return { format, filter, after: afterOf(param, store), header: header === 'true' };
}
