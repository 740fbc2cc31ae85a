/** Waits between attempts of a batch: 1 s doubling to 5 minutes (docs/browser.md, Delivery). */
export const firstRetryMs = 1_000;
export const maxRetryMs = 300_000;

/**
 * The wait before retry number `retry` (0 for the first) of a batch: min(5 min, 1 s × 2^retry)
 * with ±50% jitter, so that the pages of a site that all failed at once do not all come back at
 * once; never less than the reply's Retry-After (`retryAfterMs`, null when there was none).
 */
export function retryDelayMs(retry: number, retryAfterMs: number | null, random: () => number): number {
  const ceiling = Math.min(maxRetryMs, firstRetryMs * 2 ** Math.min(retry, 30));
  return Math.max(Math.round(ceiling * (0.5 + random())), retryAfterMs ?? 0);
}
