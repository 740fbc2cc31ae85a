import type { ItemResult } from '../types.js';

/** The reply's error text: form A `{ error }`, form B `{ response: { message } }`. */
export function errorText(body: unknown): string {
  const { error, response } = (body ?? {}) as { error?: unknown; response?: { message?: unknown } };
  return String(error ?? response?.message ?? 'no error text');
}

/** The results of a 200 bulk reply, one per item; null when the reply is not that. */
export function resultsOf(body: unknown, items: number): ItemResult[] | null {
  const response = (body as { response?: unknown } | null)?.response;
  return Array.isArray(response) && response.length === items ? (response as ItemResult[]) : null;
}

/** Statuses worth another attempt: a key or an origin the owner may fix, a timeout, a rate limit, the service down. */
export function retriable(status: number): boolean {
  return status < 400 || status >= 500 || [401, 403, 408, 429].includes(status);
}
