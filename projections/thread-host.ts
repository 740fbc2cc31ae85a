import { Worker } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { Config } from '../src/config.js';
import type { Logger } from '../src/logger.js';

/** What the service's thread tells its projection thread. */
export type ToProjectionThread =
  | { type: 'wake'; accountIds: readonly string[] }
  | { type: 'metrics'; request: number }
  | { type: 'stop' };

/** What the projection thread answers. */
export type FromProjectionThread = { type: 'metrics'; request: number; metrics: MetricObjectWithValues<MetricValue<string>>[] };

/** What the projection thread is started with. */
export interface ProjectionThreadData {
  config: Config;
  /** The service's log level (a test's silent service has a silent thread). */
  logLevel: string;
}

/** A thread that died unasked is started again after this long, doubling up to a minute. */
const firstRestartMs = 1_000;
/** A stop that has not ended the thread after this long terminates it (its batches roll back). */
const stopGraceMs = 20_000;

export interface ProjectionThread {
  /** The accounts just appended to: their projections look at once rather than at the next poll. */
  wake(accountIds: readonly string[]): void;
  /** The thread's metrics (projection lag, apply rate, parts), for the service's /metrics. */
  metrics(): Promise<MetricObjectWithValues<MetricValue<string>>[]>;
  stop(): Promise<void>;
}

/**
 * The projection worker of `npm start`, in a thread of the service's process: its folds and its
 * garbage never stall the event loop that answers requests, nor requests its batches. Under
 * another account's import, a probe's profile reached its Leads in 27-38 ms at p50 and 289-508 ms
 * at p99 this way, against 47-75 and 454-646 ms on one event loop (docs/performance.md, run I).
 */
export function startProjectionThread(config: Config, log: Logger): ProjectionThread {
  let thread: Worker | null = null;
  let stopping = false;
  let restartMs = firstRestartMs;
  let restartTimer: NodeJS.Timeout | null = null;
  let requests = 0;
  const waiting = new Map<number, (metrics: MetricObjectWithValues<MetricValue<string>>[]) => void>();

  const start = (): void => {
    const workerData: ProjectionThreadData = { config, logLevel: log.level };
    const started = new Worker(new URL('./thread-entry.js', import.meta.url), { workerData });
    thread = started;
    const ranSince = Date.now();
    started.on('message', (message: FromProjectionThread) => {
      waiting.get(message.request)?.(message.metrics);
      waiting.delete(message.request);
    });
    started.on('error', (error) => log.error({ err: error }, 'projection thread failed'));
    started.on('exit', (code) => {
      thread = null;
      for (const answer of waiting.values()) answer([]);
      waiting.clear();
      if (stopping) return;
      // A thread that ran a while before dying starts again quickly; one that dies at once backs off.
      const delayMs = Date.now() - ranSince > 60_000 ? firstRestartMs : restartMs;
      restartMs = Math.min(delayMs * 2, 60_000);
      log.error({ code, restartInMs: delayMs }, 'projection thread exited; starting it again');
      restartTimer = setTimeout(start, delayMs);
    });
  };
  start();

  const send = (message: ToProjectionThread): void => thread?.postMessage(message);
  return {
    wake: (accountIds) => send({ type: 'wake', accountIds }),
    metrics: () => {
      if (!thread) return Promise.resolve([]);
      const request = ++requests;
      const answer = new Promise<MetricObjectWithValues<MetricValue<string>>[]>((resolve) => waiting.set(request, resolve));
      send({ type: 'metrics', request });
      return answer;
    },
    stop: async () => {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = thread;
      if (!running) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      send({ type: 'stop' });
      const force = setTimeout(() => {
        log.warn('projection thread did not stop in time; terminating it (its open batches roll back)');
        void running.terminate();
      }, stopGraceMs);
      await exited;
      clearTimeout(force);
    },
  };
}
