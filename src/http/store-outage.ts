import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';

/** How often an outage is reported while it lasts, and how long without a refusal ends it. */
export const outageReportMs = 10_000;

/**
 * The log of a store outage: one warning when requests start being refused (503), a count every
 * outageReportMs while they still are, and one line when a whole period has passed without a
 * refusal (the store is back, or nobody asked) — not one line per refused request.
 */
export class StoreOutage {
  private since: number | null = null;
  private lastRefusedAt = 0;
  private refused = 0;
  private refusedInPeriod = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: Logger,
    private readonly metrics?: Metrics,
    private readonly reportMs = outageReportMs,
  ) {}

  /** A request was answered 503 because the store could not be reached. */
  refusedRequest(error: unknown, route: string | undefined): void {
    this.metrics?.storeUnavailable.inc();
    const now = Date.now();
    this.refused += 1;
    this.refusedInPeriod += 1;
    this.lastRefusedAt = now;
    if (this.since !== null) return;
    this.since = now;
    this.log.warn({ err: error, route }, 'store unavailable: requests are answered 503 until it is back');
    this.timer = setInterval(() => this.report(), this.reportMs).unref();
  }

  private report(): void {
    if (this.since === null) return;
    if (this.refusedInPeriod > 0) {
      this.log.warn({ refused: this.refused, lastPeriod: this.refusedInPeriod, downMs: Date.now() - this.since }, 'store still unavailable');
      this.refusedInPeriod = 0;
      return;
    }
    this.log.info(
      { refused: this.refused, downMs: this.lastRefusedAt - this.since, quietMs: this.reportMs },
      'store outage over: no request refused since',
    );
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.since = null;
    this.refused = 0;
  }
}
