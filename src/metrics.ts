import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';

/** Metrics of a registry in another thread, as getMetricsAsJSON gives them. */
export type MetricsOfThread = () => Promise<MetricObjectWithValues<MetricValue<string>>[]>;

/**
 * Prometheus metrics of one service instance (own registry, so several instances can live in one
 * process). Every metric of the service's own starts with `tracking_`; rates are counters, for
 * `rate()` to compute. The Node.js process metrics keep their standard names (`process_*`,
 * `nodejs_*`), which ready-made dashboards expect.
 */
export const metricPrefix = 'tracking_';

export class Metrics {
  readonly registry = new Registry();

  /** `route` is the matched route pattern, the same whatever the status; `unmatched` for no route. */
  readonly requests = new Counter({
    name: `${metricPrefix}http_requests_total`,
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly latency = new Histogram({
    name: `${metricPrefix}http_request_duration_seconds`,
    help: 'HTTP request latency by method and route',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly appendBatchEvents = new Histogram({
    name: `${metricPrefix}eventstore_append_batch_events`,
    help: 'Events written per event store transaction (group commit batch size)',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500],
    registers: [this.registry],
  });

  readonly rejectedItems = new Counter({
    name: `${metricPrefix}ingest_rejected_items_total`,
    help: 'Items rejected, by endpoint and reason',
    labelNames: ['endpoint', 'reason'] as const,
    registers: [this.registry],
  });

  readonly acceptedItems = new Counter({
    name: `${metricPrefix}ingest_accepted_items_total`,
    help: 'Items durably stored and answered queued, by endpoint',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly activityDropped = new Counter({
    name: `${metricPrefix}ingest_activity_dropped_total`,
    help: 'Rejected items (kind item) or counters (kind count) of the ingest activity dropped because too much was waiting to be written',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly bodyBytesInFlight = new Gauge({
    name: `${metricPrefix}http_body_bytes_in_flight`,
    help: 'Bytes of request bodies reserved by requests being served (INFLIGHT_BODY_BYTES is the most)',
    registers: [this.registry],
  });

  readonly bulkRequestsWaiting = new Gauge({
    name: `${metricPrefix}http_bulk_requests_waiting`,
    help: 'Bulk requests waiting, their bodies unread, for a turn of their account (ACCOUNT_BULK_CONCURRENCY run at once per account)',
    registers: [this.registry],
  });

  readonly storeUnavailable = new Counter({
    name: `${metricPrefix}store_unavailable_total`,
    help: 'Requests answered 503 because the event store or the database could not be reached',
    registers: [this.registry],
  });

  readonly projectionEventsApplied = new Counter({
    name: `${metricPrefix}projection_events_applied_total`,
    help: 'Events applied to the read models, by projection (rate() gives the apply rate)',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionEventsParked = new Counter({
    name: `${metricPrefix}projection_events_parked_total`,
    help: 'Events a projection could not apply and parked, by projection',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionParked = new Gauge({
    name: `${metricPrefix}projection_parked_events`,
    help: 'Events parked and not yet re-applied, by projection (over every account)',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionLagEvents = new Gauge({
    name: `${metricPrefix}projection_lag_events`,
    help: 'Stored events the projection has not applied yet, of the accounts furthest behind in the parts this worker holds',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionLagSeconds = new Gauge({
    name: `${metricPrefix}projection_lag_seconds`,
    help: 'How long the account furthest behind (in the parts this worker holds) has had events the projection has not applied; 0 when none has',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionAccountsBehind = new Gauge({
    name: `${metricPrefix}projection_accounts_behind`,
    help: 'Accounts with events the projection has not applied yet, in the parts this worker holds',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  /** No label per account: the worst ten by rank, whoever they are. */
  readonly projectionWorstLagSeconds = new Gauge({
    name: `${metricPrefix}projection_worst_account_lag_seconds`,
    help: 'Lag of the accounts furthest behind in the parts this worker holds, by rank (1 the worst; 10 at most)',
    labelNames: ['rank'] as const,
    registers: [this.registry],
  });

  readonly projectionAccountLag = new Histogram({
    name: `${metricPrefix}projection_account_lag_seconds`,
    help: 'Lag of each account behind, sampled every few seconds (the spread of lag over accounts)',
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
    registers: [this.registry],
  });

  readonly projectionActive = new Gauge({
    name: `${metricPrefix}projection_active`,
    help: '1 when this process holds parts of the projection work (every projection of their accounts), 0 when it holds none',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionParts = new Gauge({
    name: `${metricPrefix}projection_parts_held`,
    help: 'Parts of the projection work this worker holds',
    registers: [this.registry],
  });

  /** Other threads of the process whose metrics are served with these (the projection thread). */
  private readonly threads: MetricsOfThread[] = [];

  constructor(withProcessMetrics = true) {
    if (withProcessMetrics) collectDefaultMetrics({ register: this.registry });
  }

  include(thread: MetricsOfThread): void {
    this.threads.push(thread);
  }

  /**
   * The exposition text of these metrics and those of the threads included: a metric a thread has
   * values of is summed over them by labels; the others are this registry's as they are (summing
   * them all would apply prom-client's cluster rules, which drop process_start_time_seconds).
   */
  async text(): Promise<string> {
    if (this.threads.length === 0) return this.registry.metrics();
    const [own, ...others] = await Promise.all([this.registry.getMetricsAsJSON(), ...this.threads.map((thread) => thread())]);
    const fromThreads = new Set(others.flat().filter((metric) => metric.values.length > 0).map((metric) => metric.name));
    const summed = AggregatorRegistry.aggregate([own, ...others].map((metrics) => metrics.filter((metric) => fromThreads.has(metric.name))));
    const ownOnly = await Promise.all(own.filter((metric) => !fromThreads.has(metric.name)).map((metric) => this.registry.getSingleMetricAsString(metric.name)));
    return `${ownOnly.join('\n')}\n${await summed.metrics()}`;
  }
}
