import type { TrackingError } from './errors.js';
import type { BatchInfo } from './types.js';

/** The service's limit on a bulk body (src/http/body.ts), and on the items of one bulk request. */
export const bulkBodyLimitBytes = 5 * 1024 * 1024;
export const bulkItemLimit = 100;

export interface TrackingClientOptions {
  /** The service, e.g. `https://track.example.com` (a path prefix is kept). */
  baseUrl: string;
  licenseCode: string;
  accessToken: string;
  /** Items of one kind that make a batch and trigger its send (default 20, at most 100). */
  flushAt?: number;
  /** A queued item waits at most this long before its batch is cut (default 1000); 0: only flushAt, bytes and flush() cut. */
  flushIntervalMs?: number;
  /** JSON bytes of one bulk body (default and at most 5 MiB, the service's bulk limit). */
  maxBatchBytes?: number;
  /** Items queued or in flight (default 10000); a call beyond it rejects at once with QueueFullError. */
  maxQueueSize?: number;
  /** JSON bytes of the items queued or in flight (default 32 MiB); same. */
  maxQueueBytes?: number;
  /** One attempt: request sent and reply read (default 15000). */
  requestTimeoutMs?: number;
  /** How long after a batch's first attempt it is still retried (default 120000: rides a 30 s outage). */
  retryForMs?: number;
  /** Bodies larger than this many bytes are sent gzip-compressed (default 1024; Infinity: never). */
  gzipAboveBytes?: number;
  /** The Idempotency-Key of a batch (1 to 255 visible ASCII characters); default a random UUID. Kept across the batch's retries. */
  idempotencyKey?: (batch: BatchInfo) => string;
  /** Every finally failed item or batch, and every rejected call, for operators. */
  onError?: (error: TrackingError) => void;
  /** The fetch to use (default the global one): for tests against a local server. */
  fetch?: typeof fetch;
}

export interface ResolvedOptions {
  /** Without a trailing slash. */
  baseUrl: string;
  licenseCode: string;
  accessToken: string;
  flushAt: number;
  flushIntervalMs: number;
  maxBatchBytes: number;
  maxQueueSize: number;
  maxQueueBytes: number;
  requestTimeoutMs: number;
  retryForMs: number;
  gzipAboveBytes: number;
  idempotencyKey: ((batch: BatchInfo) => string) | null;
  onError: ((error: TrackingError) => void) | null;
  fetch: typeof fetch;
}

export const defaults = {
  flushAt: 20,
  flushIntervalMs: 1000,
  maxBatchBytes: bulkBodyLimitBytes,
  maxQueueSize: 10_000,
  maxQueueBytes: 32 * 1024 * 1024,
  requestTimeoutMs: 15_000,
  retryForMs: 120_000,
  gzipAboveBytes: 1024,
} as const;

/** Visible ASCII: what an HTTP header value can carry unchanged. */
const headerSafe = /^[\x21-\x7e]+$/;

function integerOption(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`TrackingClient option ${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

function textOption(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new TypeError(`TrackingClient option ${name} must be a non-empty string`);
  return value;
}

/** The options with their defaults, checked: a wrong one throws at construction, naming it. */
export function resolveOptions(options: TrackingClientOptions): ResolvedOptions {
  const baseUrl = textOption('baseUrl', options.baseUrl);
  let parsed: URL;
  try {
    parsed = new URL(baseUrl);
  } catch {
    throw new TypeError(`TrackingClient option baseUrl must be an absolute http(s) URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`TrackingClient option baseUrl must be an http(s) URL, got ${parsed.protocol}`);
  }
  const accessToken = textOption('accessToken', options.accessToken);
  if (!headerSafe.test(accessToken)) throw new TypeError('TrackingClient option accessToken must be visible ASCII characters only');
  const gzipAboveBytes = options.gzipAboveBytes ?? defaults.gzipAboveBytes;
  if (!(gzipAboveBytes >= 0)) throw new RangeError(`TrackingClient option gzipAboveBytes must be 0 or more (Infinity: never), got ${String(gzipAboveBytes)}`);
  const day = 24 * 60 * 60 * 1000;
  return {
    baseUrl: baseUrl.replace(/\/+$/, ''),
    licenseCode: textOption('licenseCode', options.licenseCode),
    accessToken,
    flushAt: integerOption('flushAt', options.flushAt, defaults.flushAt, 1, bulkItemLimit),
    flushIntervalMs: integerOption('flushIntervalMs', options.flushIntervalMs, defaults.flushIntervalMs, 0, day),
    // The smallest body holds one small item: `[{}]`.
    maxBatchBytes: integerOption('maxBatchBytes', options.maxBatchBytes, defaults.maxBatchBytes, 64, bulkBodyLimitBytes),
    maxQueueSize: integerOption('maxQueueSize', options.maxQueueSize, defaults.maxQueueSize, 1, Number.MAX_SAFE_INTEGER),
    maxQueueBytes: integerOption('maxQueueBytes', options.maxQueueBytes, defaults.maxQueueBytes, 64, Number.MAX_SAFE_INTEGER),
    requestTimeoutMs: integerOption('requestTimeoutMs', options.requestTimeoutMs, defaults.requestTimeoutMs, 1, day),
    retryForMs: integerOption('retryForMs', options.retryForMs, defaults.retryForMs, 0, day),
    gzipAboveBytes,
    idempotencyKey: options.idempotencyKey ?? null,
    onError: options.onError ?? null,
    fetch: options.fetch ?? globalThis.fetch,
  };
}

/** Whether `key` can be an Idempotency-Key: 1 to 255 characters (the service's limit), header-safe. */
export function validIdempotencyKey(key: unknown): key is string {
  return typeof key === 'string' && key.length <= 255 && headerSafe.test(key);
}
