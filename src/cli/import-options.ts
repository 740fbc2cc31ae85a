import { extname } from 'node:path';
import { CliError } from './context.js';
import { importKinds, isImportKind, type ImportKind } from './import-record.js';

export type ImportFormat = 'ndjson' | 'csv';

export interface ImportOptions {
  kind: ImportKind;
  file: string;
  format: ImportFormat;
  baseUrl: string;
  licenseCode: string;
  accessToken: string;
  json: boolean;
}

/** What the command line gave, before the environment fills the gaps. */
export interface ImportFlags {
  url?: string | undefined;
  license?: string | undefined;
  token?: string | undefined;
  format?: string | undefined;
  json: boolean;
}

export const importUsageLine = `  import <${importKinds.join('|')}> <file> [--format ndjson|csv]
                                  send the items of an NDJSON or CSV file to a running service`;

export const importUsage = `usage: tracking import <${importKinds.join('|')}> <file> [options]

Sends the items of a file to a running service over HTTP (bulk endpoints, batches of 100, retried,
rate limits respected). Run it again within 24 hours and it stores nothing twice.

  <file>             NDJSON (.ndjson, .jsonl: one JSON item a line) or CSV (.csv: a header row;
                     columns are the item's fields, attributes.<key> for a user's custom
                     attributes, eventData.<key> or properties.<key> for the other kinds)
  --format ndjson|csv  when the file's extension does not say
  --url <url>        the service (TRACKING_URL; default http://localhost:3000)
  --license <code>   the account's license code (TRACKING_LICENSE_CODE)
  --token <token>    an access token (TRACKING_ACCESS_TOKEN, preferred: a token on the command line
                     is visible to other users in \`ps\` and kept in shell history)
  --json             the summary as JSON on stdout

Rejected lines go, with their line number and the reason, to <file>.rejected.ndjson.
Exit code 0 when every item was accepted, 1 when any was rejected or failed, 2 for a usage error.`;

const formatsByExtension: Record<string, ImportFormat> = { '.ndjson': 'ndjson', '.jsonl': 'ndjson', '.csv': 'csv' };

function required(value: string | undefined, option: string, variable: string): string {
  if (value) return value;
  throw new CliError(`no ${option.slice(2)}: pass ${option} or set ${variable}\n\n${importUsage}`, 2);
}

/** The import's settings from its arguments, flags and environment; a usage error says what is missing. */
export function importOptions(args: readonly string[], flags: ImportFlags, env: NodeJS.ProcessEnv): ImportOptions {
  const [kind, file, ...extra] = args;
  if (!isImportKind(kind) || !file || extra.length > 0) throw new CliError(importUsage, 2);
  const format = flags.format ?? formatsByExtension[extname(file).toLowerCase()];
  if (format !== 'ndjson' && format !== 'csv') {
    const why = flags.format ? `unknown format '${flags.format}'` : `cannot tell the format of ${file} from its extension`;
    throw new CliError(`${why}: use --format ndjson or --format csv`, 2);
  }
  const baseUrl = flags.url ?? env.TRACKING_URL ?? 'http://localhost:3000';
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new CliError(`--url must be an http(s) URL such as http://localhost:3000, not '${baseUrl}'`, 2);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`--url must be an http(s) URL, not ${url.protocol}`, 2);
  if (url.username || url.password) throw new CliError('--url must not carry credentials: pass the license code and token as such', 2);
  return {
    kind,
    file,
    format,
    baseUrl,
    licenseCode: required(flags.license ?? env.TRACKING_LICENSE_CODE, '--license', 'TRACKING_LICENSE_CODE'),
    accessToken: required(flags.token ?? env.TRACKING_ACCESS_TOKEN, '--token', 'TRACKING_ACCESS_TOKEN'),
    json: flags.json,
  };
}
