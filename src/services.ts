import { EventEmitter } from 'node:events';
import { AccountDirectory } from './accounts.js';
import type { Config } from './config.js';
import type { Pool } from './db/pool.js';
import { createEventStore } from './eventstore/index.js';
import type { EventStore } from './eventstore/port.js';
import { BodyBudget } from './http/body-budget.js';
import { AdminTokenGuesses } from './http/sign-in-limit.js';
import { IngestRateLimits } from './http/rate-limit.js';
import { IngestActivity } from './ingest/activity.js';
import { AttributeTypeRegistry } from './ingest/attribute-registry.js';
import { IdentityMap } from './ingest/identity-map.js';
import { IdempotencyKeys } from './ingest/idempotency.js';
import { Validator } from './ingest/validation.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { SessionStore } from './sessions.js';

/** Everything the HTTP app needs, built once per process. */
export interface Services {
  config: Config;
  log: Logger;
  pool: Pool;
  metrics: Metrics;
  store: EventStore;
  validator: Validator;
  registry: AttributeTypeRegistry;
  identities: IdentityMap;
  idempotency: IdempotencyKeys;
  accounts: AccountDirectory;
  /** Dashboard sessions (cookie tracking_session). */
  sessions: SessionStore;
  rateLimits: IngestRateLimits;
  /** Bytes of request bodies held at once. */
  bodies: BodyBudget;
  /** Wrong admin tokens by client address, shared by sign-in and every route that takes the admin token. */
  adminTokenGuesses: AdminTokenGuesses;
  /** Emits 'appended' after each committed append batch, with its accounts, so that projection workers look at once. */
  appends: EventEmitter<{ appended: [accountIds: readonly string[]] }>;
  /** What each account's ingest accepted and rejected, written once a second; close() before the pool ends. */
  activity: IngestActivity;
}

export function createServices(config: Config, pool: Pool, log: Logger, metrics = new Metrics()): Services {
  const appends = new EventEmitter<{ appended: [accountIds: readonly string[]] }>();
  return {
    config,
    log,
    pool,
    metrics,
    appends,
    store: createEventStore(config, pool, log, (events, accountIds) => {
      metrics.appendBatchEvents.observe(events);
      appends.emit('appended', accountIds);
    }),
    validator: new Validator(),
    registry: new AttributeTypeRegistry(pool),
    identities: new IdentityMap(pool),
    idempotency: new IdempotencyKeys(pool),
    accounts: new AccountDirectory(pool, undefined, log),
    sessions: new SessionStore(pool, config.adminToken),
    rateLimits: new IngestRateLimits(pool, config.productEventsPerMinute, config.otherEndpointsPerMinute),
    bodies: new BodyBudget(config.inflightBodyBytes, metrics),
    adminTokenGuesses: new AdminTokenGuesses(),
    activity: new IngestActivity(pool, log, {}, metrics),
  };
}
