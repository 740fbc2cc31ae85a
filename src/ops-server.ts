import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { quickPing, type Pool } from './db/pool.js';
import type { EventStore } from './eventstore/port.js';
import { requestIdHeader, requestIdOf } from './http/access-log.js';
import { MetricsAccess, metricsTokenRequired } from './http/metrics-auth.js';
import type { Logger } from './logger.js';
import type { WorkerState } from '../projections/runner/worker.js';

export interface WorkerHealth {
  registry: Registry;
  pool: Pool;
  store: EventStore;
  /** The state of this process's projection worker. */
  projectionWorker(): WorkerState;
  isStopping(): boolean;
  log: Logger;
  /** METRICS_TOKEN (src/config.ts): when set, /metrics needs it. */
  metricsToken?: string | undefined;
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Why this worker is not ready, or null when it is: it is not stopping, it reaches its database and
 * event store, and its projection worker holds parts or stands by (more workers than parts), rather
 * than starting over after an error.
 */
async function notReadyBecause(health: WorkerHealth): Promise<string | null> {
  if (health.isStopping()) return 'shutting down';
  try {
    await quickPing(health.pool);
  } catch {
    return 'the database cannot be reached';
  }
  try {
    await health.store.ping();
  } catch {
    return 'the event store cannot be reached';
  }
  const state = health.projectionWorker();
  return state === 'active' || state === 'standby' ? null : `projection worker not running (${state})`;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

async function answer(health: WorkerHealth, metricsAccess: MetricsAccess, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '').split('?', 1)[0];
  if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, { error: 'only GET is served here', code: 405 });
  if (path === '/livez') return reply(res, 200, { status: 'ok' });
  if (path === '/readyz') {
    const reason = await notReadyBecause(health);
    const projectionWorker = health.projectionWorker();
    if (reason === null) return reply(res, 200, { status: 'ok', projectionWorker });
    return reply(res, 503, { error: reason, code: 503, projectionWorker });
  }
  if (path === '/metrics') {
    if (!metricsAccess.allows(req.headers.authorization)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return reply(res, 401, { error: metricsTokenRequired, code: 401 });
    }
    const text = await health.registry.metrics();
    res.writeHead(200, { 'content-type': health.registry.contentType }).end(text);
    return;
  }
  reply(res, 404, { error: 'no such endpoint: the worker serves /livez, /readyz and /metrics', code: 404 });
}

/**
 * The HTTP endpoint of `npm run worker` (WORKER_PORT): `/livez`, `/readyz` and `/metrics`, as the
 * API serves them (docs/operations.md).
 */
export function startOpsServer(health: WorkerHealth, port: number, host?: string): Promise<OpsServer> {
  const metricsAccess = new MetricsAccess(health.metricsToken);
  const server: Server = createServer((req, res) => {
    res.setHeader(requestIdHeader, requestIdOf(req));
    answer(health, metricsAccess, req, res).catch((error: unknown) => {
      health.log.error({ err: error }, 'worker health endpoint failed');
      if (!res.headersSent) reply(res, 500, { error: 'internal error', code: 500 });
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}
