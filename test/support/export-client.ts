import { request as httpRequest } from 'node:http';
import type { Credentials, TestApp } from './app.js';

/** An exported event as an NDJSON line holds it (docs/export.md). */
export interface ExportLine {
  cursor: string;
  eventId: string;
  trackID: string;
  kind: string;
  eventType: string;
  receivedAt: string;
  data: Record<string, unknown>;
  source?: unknown;
  erased: { erasureId: string | null; erasedAt: string | null } | null;
}

export interface ExportReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body as received (a Parquet file's bytes). */
  bytes: Buffer;
  trailers: Record<string, string | undefined>;
  /** The reply ended as HTTP ends a complete one (its last chunk came). */
  complete: boolean;
}

const queryText = (query: Record<string, string | undefined>): string => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
};

/**
 * GET .../export through a raw HTTP request: the body as text, its trailers, and whether it ended
 * complete. `cutAfterBytes`: the client hangs up once it has that many bytes (an export cut off).
 */
export function exportOf(
  app: TestApp,
  account: Credentials,
  query: Record<string, string | undefined> = {},
  options: { cutAfterBytes?: number; authorization?: string; whilePaused?: () => Promise<void> } = {},
): Promise<ExportReply> {
  const url = new URL(`${app.baseUrl}/admin/v1/accounts/${account.licenseCode}/export${queryText(query)}`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { authorization: options.authorization ?? `Bearer ${account.accessToken}` } }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      let settled = false;
      const settle = (complete: boolean): void => {
        if (settled) return;
        settled = true;
        const all = Buffer.concat(chunks);
        const kept = options.cutAfterBytes !== undefined && !complete ? all.subarray(0, Math.min(all.length, options.cutAfterBytes)) : all;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: kept.toString('utf8'), bytes: kept, trailers: res.trailers, complete });
      };
      // The client reads nothing while `whilePaused` runs: a slow consumer.
      if (options.whilePaused) {
        res.pause();
        void options.whilePaused().then(
          () => res.resume(),
          (error: unknown) => {
            req.destroy();
            reject(error instanceof Error ? error : new Error(String(error)));
          },
        );
      }
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
        if (options.cutAfterBytes !== undefined && bytes >= options.cutAfterBytes) {
          req.destroy();
          settle(false);
        }
      });
      res.on('end', () => settle(res.complete));
      res.on('error', () => settle(false));
      res.on('close', () => settle(res.complete));
    });
    req.on('error', (error) => {
      if (options.cutAfterBytes === undefined) reject(error);
    });
    req.end();
  });
}

/** The complete lines of an NDJSON text, parsed; a last line without its \n (cut off) is left out. */
export function ndjsonLinesOf(text: string): ExportLine[] {
  const end = text.lastIndexOf('\n');
  if (end < 0) return [];
  return text
    .slice(0, end)
    .split('\n')
    .map((line) => JSON.parse(line) as ExportLine);
}

export interface FeedReply {
  events: ExportLine[];
  next: string | null;
  atEnd: boolean;
}

export async function feedOf(app: TestApp, account: Credentials, query: Record<string, string | undefined> = {}): Promise<{ status: number; body: FeedReply }> {
  return app.get<FeedReply>(`/admin/v1/accounts/${account.licenseCode}/feed${queryText(query)}`, `Bearer ${account.accessToken}`);
}
