import type { operations } from '../api-types';

/**
 * The address of an account's export (GET .../export) for the filters a page applies: given to a
 * plain download link, so that the browser streams the file to disk itself, whatever its size,
 * instead of the page holding it in memory. The session cookie goes with it as with any call.
 */

type ExportQuery = NonNullable<operations['export-events']['parameters']['query']>;
export type ExportKind = NonNullable<ExportQuery['kind']>;

/** What Live events filters by, with the meaning the export gives the same names. */
export interface ExportSelection {
  kind?: ExportKind;
  name?: string;
  user?: string;
}

export interface ExportLink {
  href: string;
  /** The name the server gives the file (Content-Disposition), also the link's `download` suggestion. */
  fileName: string;
}

function exportHref(license: string, query: ExportQuery): string {
  const params = new URLSearchParams();
  // An empty filter is none: left out, as the server would read it anyway.
  for (const [name, value] of Object.entries(query)) if (typeof value === 'string' && value !== '') params.set(name, value);
  const text = params.toString();
  const path = `/admin/v1/accounts/${encodeURIComponent(license)}/export`;
  return text ? `${path}?${text}` : path;
}

/** The NDJSON export of what `selection` selects: every kind, or the one chosen. */
export function ndjsonExport(license: string, selection: ExportSelection): ExportLink {
  return { href: exportHref(license, { format: 'ndjson', ...selection }), fileName: 'events.ndjson' };
}

/** The CSV or Parquet export of one kind (its columns are that kind's); CSV with its header line. */
export function tableExport(license: string, format: 'csv' | 'parquet', selection: ExportSelection & { kind: ExportKind }): ExportLink {
  return { href: exportHref(license, { format, ...selection }), fileName: `events-${selection.kind}.${format}` };
}
