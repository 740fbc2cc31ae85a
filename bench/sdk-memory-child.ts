import { setTimeout as sleep } from 'node:timers/promises';
import { QueueFullError, TrackingClient, type TrackedEvent } from '@tracking-ingestion/sdk';
import { freePort } from '../src/net.js';
import { eventBody } from './bodies.js';

/*
 * Run by bench/sdk.ts with --expose-gc: fills a client's queue to the default maxQueueSize against
 * an address where nothing listens (its first batch fails and waits for a retry, the rest wait
 * behind it), then prints, as JSON, process.memoryUsage() after a full GC over that before the
 * client was made.
 */

function settled(): NodeJS.MemoryUsage {
  // Twice: the first collection may only make more garbage collectable.
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage();
}

const baseUrl = `http://127.0.0.1:${await freePort()}`;
// fetch loads and sets up its HTTP machinery on first use: not the client's to count.
await fetch(baseUrl).catch(() => undefined);
const before = settled();
const client = new TrackingClient({ baseUrl, licenseCode: 'bench', accessToken: 'bench-token', onError: () => undefined });
const maxQueueSize = 10_000;
let jsonBytes = 0;
for (let n = 0; n < maxQueueSize; n += 1) {
  const json = eventBody(n);
  jsonBytes += Buffer.byteLength(json, 'utf8');
  void client.track(JSON.parse(json) as TrackedEvent);
}
const refused = await client.track({ userId: 'one-more', eventName: 'x' }).then(
  () => null,
  (error: unknown) => error,
);
if (!(refused instanceof QueueFullError)) throw new Error(`the queue should be full at ${maxQueueSize} items: ${String(refused)}`);
for (const until = Date.now() + 10_000; client.stats().retried === 0; await sleep(10)) {
  if (Date.now() > until) throw new Error('the first batch was not refused within 10 s');
}
const { queued, inFlight } = client.stats();
if (queued + inFlight !== maxQueueSize) throw new Error(`the client holds ${queued + inFlight} items, not ${maxQueueSize}`);
const after = settled();
console.log(
  JSON.stringify({
    items: maxQueueSize,
    jsonBytes,
    heapUsedBytes: after.heapUsed - before.heapUsed,
    externalBytes: after.external - before.external,
    rssBytes: after.rss - before.rss,
    gcExposed: typeof globalThis.gc === 'function',
  }),
);
// The client would hold the process for its retries (retryForMs, 120 s).
process.exit(0);
