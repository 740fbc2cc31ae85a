/**
 * When to send a failed batch again: exponential backoff with full jitter (a uniform wait between 0
 * and min(maxDelayMs, initialDelayMs × 2^retry)), never sooner than the reply's Retry-After, and
 * only within the time budget counted from the batch's first attempt.
 */
export interface BackoffTiming {
  initialDelayMs: number;
  maxDelayMs: number;
  /** How long after a batch's first attempt it may still be retried. */
  retryForMs: number;
}

/** Waits of at most 5 s: after an outage ends, a batch goes out again within 5 s. */
export const defaultBackoff = { initialDelayMs: 500, maxDelayMs: 5_000 } as const;

export class RetryPolicy {
  constructor(
    private readonly timing: BackoffTiming,
    /** Uniform in [0, 1): injected by tests to check the jitter's bounds. */
    private readonly random: () => number = Math.random,
  ) {}

  get retryForMs(): number {
    return this.timing.retryForMs;
  }

  /** The jittered wait before retry number `retry` (0 for the first retry). */
  backoffMs(retry: number): number {
    const ceiling = Math.min(this.timing.maxDelayMs, this.timing.initialDelayMs * 2 ** retry);
    return Math.floor(this.random() * ceiling);
  }

  /**
   * The wait before retry number `retry` of a batch whose latest attempt failed `elapsedMs` after its
   * first one, or null when the budget does not allow another attempt (it is spent, or the server
   * asked for a wait longer than what is left of it). A wait is cut to what is left of the budget,
   * so the last attempt is made at its end.
   */
  delayMs(retry: number, elapsedMs: number, retryAfterMs: number | null): number | null {
    const remaining = this.timing.retryForMs - elapsedMs;
    if (remaining <= 0) return null;
    if (retryAfterMs !== null && retryAfterMs > remaining) return null;
    const backoff = this.backoffMs(retry);
    return Math.min(retryAfterMs === null ? backoff : Math.max(retryAfterMs, backoff), remaining);
  }
}

const deltaSeconds = /^\d+$/;
/** asctime's form, which carries no zone: it is UTC (RFC 9110 5.6.7). */
const asctime = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * A Retry-After header (RFC 9110 10.2.3) as milliseconds from `now`: delay-seconds or an HTTP-date
 * (a date already past is 0). Null when absent or unreadable, so that backoff alone decides.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (deltaSeconds.test(text)) return Number(text) * 1000;
  if (!/[A-Za-z]/.test(text)) return null;
  const date = Date.parse(asctime.test(text) ? `${text} GMT` : text);
  return Number.isFinite(date) ? Math.max(0, date - now) : null;
}
