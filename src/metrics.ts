import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics of one service instance (own registry, so several instances can live in one process). */
export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by endpoint and status code',
    labelNames: ['endpoint', 'status'] as const,
    registers: [this.registry],
  });

  readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  readonly appendBatchEvents = new Histogram({
    name: 'eventstore_append_batch_events',
    help: 'Events written per event store transaction (group commit batch size)',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500],
    registers: [this.registry],
  });

  readonly rejectedItems = new Counter({
    name: 'ingest_rejected_items_total',
    help: 'Items rejected, by endpoint and reason',
    labelNames: ['endpoint', 'reason'] as const,
    registers: [this.registry],
  });

  readonly acceptedItems = new Counter({
    name: 'ingest_accepted_items_total',
    help: 'Items durably stored and answered queued, by endpoint',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly projectionEventsApplied = new Counter({
    name: 'projection_events_applied_total',
    help: 'Events applied to the read models, by projection',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionApplyRate = new Gauge({
    name: 'projection_events_applied_per_second',
    help: 'Events applied per second over the last few seconds, by projection (active worker only)',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionLagEvents = new Gauge({
    name: 'projection_lag_events',
    help: 'Stored events the projection has not applied yet (active worker only)',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionLagSeconds = new Gauge({
    name: 'projection_lag_seconds',
    help: 'Age of the oldest stored event the projection has not applied yet; 0 when caught up (active worker only)',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  readonly projectionActive = new Gauge({
    name: 'projection_active',
    help: '1 when this process runs the projection, 0 when it stands by',
    labelNames: ['projection'] as const,
    registers: [this.registry],
  });

  constructor(withProcessMetrics = true) {
    if (withProcessMetrics) collectDefaultMetrics({ register: this.registry });
  }
}
