import { EventEmitter } from 'node:events';
import { AccountDirectory } from './accounts/directory.js';
import { BrowserKeyRegistry } from './accounts/browser-key-registry.js';
import { SessionStore } from './accounts/sessions.js';
import { IngestActivity } from './activity/recorder.js';
import type { Config } from './config.js';
import type { Pool } from './db/pool.js';
import { createEventStore } from './eventstore/index.js';
import { Pseudonyms } from './eventstore/pseudonyms.js';
import type { AppParts } from './http/app.js';
import { AttributeTypeRegistry } from './ingest/attribute-registry.js';
import { IdentityMap } from './ingest/identity-map.js';
import { IdempotencyKeys } from './ingest/idempotency.js';
import { SuppressedIds } from './ingest/suppressed.js';
import { ErasureRunner } from './erasure/runner.js';
import { AppendWaits } from './export/append-waits.js';
import { Validator } from './ingest/validation.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics.js';

/**
 * The parts of a service process, built once: what the HTTP app is made of (the routers each take
 * the few they use, src/http/app.ts) and what the process itself drives (src/server.ts).
 */
export interface ServiceParts extends AppParts {
  erasures: ErasureRunner;
  feedWaits: AppendWaits;
  /** Emits 'appended' after each committed append batch, with its accounts, so that projection workers look at once. */
  appends: EventEmitter<{ appended: [accountIds: readonly string[]] }>;
}

export function createServiceParts(config: Config, pool: Pool, log: Logger, metrics = new Metrics()): ServiceParts {
  const appends = new EventEmitter<{ appended: [accountIds: readonly string[]] }>();
  const feedWaits = new AppendWaits();
  const store = createEventStore(config, pool, log, (events, accountIds) => {
    metrics.appendBatchEvents.observe(events);
    appends.emit('appended', accountIds);
    feedWaits.appended(accountIds);
  });
  return {
    config,
    log,
    pool,
    metrics,
    appends,
    feedWaits,
    store,
    commands: { store, validator: new Validator(), registry: new AttributeTypeRegistry(pool), identities: new IdentityMap(pool), suppressed: new SuppressedIds(pool), pseudonyms: new Pseudonyms(pool) },
    idempotency: new IdempotencyKeys(pool),
    accounts: new AccountDirectory(pool, undefined, log),
    browserKeys: new BrowserKeyRegistry(pool, undefined, log),
    sessions: new SessionStore(pool, config.adminToken),
    // Written once a second; close() before the pool ends.
    activity: new IngestActivity(pool, log, {}, metrics),
    // Started and stopped by the process (src/server.ts), so that a CLI using these parts runs none.
    erasures: new ErasureRunner({ pool, store, log: log.child({ component: 'erasure' }) }),
  };
}
