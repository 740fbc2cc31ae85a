import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { parseRetryAfter } from './retry.js';
import { userAgent } from './version.js';

const gzipAsync = promisify(gzip);

/** A reply is read up to this many bytes: a bulk reply of 100 results is a few KiB. */
const maxReplyBytes = 1024 * 1024;

/** A request body, encoded once per batch so that every attempt sends the same bytes. */
export interface EncodedBody {
  bytes: Uint8Array;
  gzipped: boolean;
}

/** What one attempt came to: a reply (its body parsed if it was JSON), or no reply. */
export type AttemptOutcome =
  | { kind: 'reply'; status: number; retryAfterMs: number | null; body: unknown }
  | { kind: 'no-reply'; message: string };

export interface TransportSettings {
  fetch: typeof fetch;
  accessToken: string;
  requestTimeoutMs: number;
  gzipAboveBytes: number;
}

/** POSTs bulk bodies: JSON, gzip above a size, one attempt bounded by a timeout. */
export class Transport {
  constructor(private readonly settings: TransportSettings) {}

  async encode(json: string): Promise<EncodedBody> {
    const bytes = Buffer.from(json, 'utf8');
    if (bytes.length <= this.settings.gzipAboveBytes) return { bytes, gzipped: false };
    return { bytes: await gzipAsync(bytes), gzipped: true };
  }

  async post(url: string, body: EncodedBody, idempotencyKey: string): Promise<AttemptOutcome> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.settings.accessToken}`,
      'content-type': 'application/json',
      accept: 'application/json',
      'idempotency-key': idempotencyKey,
      'user-agent': userAgent,
    };
    if (body.gzipped) headers['content-encoding'] = 'gzip';
    const timeout = AbortSignal.timeout(this.settings.requestTimeoutMs);
    const send = this.settings.fetch;
    try {
      const response = await send(url, { method: 'POST', headers, body: body.bytes, signal: timeout });
      const text = await boundedText(response);
      return {
        kind: 'reply',
        status: response.status,
        retryAfterMs: parseRetryAfter(response.headers.get('retry-after'), Date.now()),
        body: text === null ? null : parsedJson(text),
      };
    } catch (error) {
      if (timeout.aborted) return { kind: 'no-reply', message: `no reply within ${this.settings.requestTimeoutMs} ms` };
      return { kind: 'no-reply', message: `network error: ${networkErrorText(error)}` };
    }
  }
}

/** The reply's text, or null past maxReplyBytes (the rest is not read). */
async function boundedText(response: Response): Promise<string | null> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of response.body) {
    length += chunk.byteLength;
    // Leaving the loop cancels the stream: the rest is never read.
    if (length > maxReplyBytes) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parsedJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** fetch's "fetch failed" hides the reason in `cause` (ECONNREFUSED, ECONNRESET, ...). */
function networkErrorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} (${cause.message})` : cause.message;
  }
  return error.message;
}
