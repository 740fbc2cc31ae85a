/**
 * `npm run bench:esdb`: appends through the EventStoreDB adapter, one at a time and with
 * BENCH_CONNECTIONS (64) in flight, for BENCH_DURATION (10) seconds each; the ratio shows whether
 * concurrent appends are multiplexed or wait for each other's round trip. The server is
 * ESDB_CONNECTION_STRING's, or the in-repo test double (whose own speed says nothing about a real
 * server's: compare the ratio, not the rates).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EsdbEventStore } from '../src/eventstore/esdb.js';
import type { NewEvent } from '../src/eventstore/port.js';
import { createLogger } from '../src/logger.js';

const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);
const seconds = Number(process.env.BENCH_DURATION ?? 10);

function event(): NewEvent {
  const id = randomUUID();
  return {
    id,
    stream: `user-bench-${id.slice(0, 4)}`,
    type: 'EventTracked',
    data: { userId: 'u-1', eventName: 'view', eventTime: null, eventTimeUtc: new Date().toISOString(), eventData: { page: '/home' } },
    metadata: { trackId: id, accountId: 'bench', receivedAt: new Date().toISOString(), schemaVersion: 1 },
  };
}

/** Appends per second with `inFlight` callers, each appending one event after the other. */
async function rate(store: EsdbEventStore, inFlight: number): Promise<{ perSecond: number; p99Ms: number }> {
  const until = Date.now() + seconds * 1000;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (Date.now() < until) {
        const started = performance.now();
        await store.append([event()]);
        latencies.push(performance.now() - started);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / seconds, p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
}

/** The test double in a child process, so that it does not share this process's core. */
async function startDouble(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(dirname(fileURLToPath(import.meta.url)), 'esdb-server-child.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [string];
  return { url: line, child };
}

const server = process.env.ESDB_CONNECTION_STRING ? null : await startDouble();
const url = process.env.ESDB_CONNECTION_STRING ?? (server as { url: string }).url;
const store = new EsdbEventStore(url, { log: createLogger('warn') });
try {
  await rate(store, connections); // warm-up: connection, JIT
  const sequential = await rate(store, 1);
  const concurrent = await rate(store, connections);
  console.log(`EventStoreDB appends on ${server ? 'the test double (its own process)' : url}, ${seconds} s each`);
  console.log(`  one at a time:      ${sequential.perSecond.toFixed(0)} appends/s, p99 ${sequential.p99Ms.toFixed(2)} ms`);
  console.log(`  ${connections} in flight:       ${concurrent.perSecond.toFixed(0)} appends/s, p99 ${concurrent.p99Ms.toFixed(2)} ms`);
  console.log(`  ratio:              ${(concurrent.perSecond / sequential.perSecond).toFixed(2)}x`);
} finally {
  await store.close();
  server?.child.kill('SIGTERM');
}
