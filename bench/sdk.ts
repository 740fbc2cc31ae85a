import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { TrackingClient, type ItemResult, type TrackedEvent } from '@tracking-ingestion/sdk';
import { eventBody } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { table } from './report.js';
import { setPhase } from './rss.js';
import { createAccount, startService, stopService } from './service.js';

/*
 * The SDK scenario. Throughput: the same kind of events sent to the service's events/bulk, one
 * request at a time, by hand (a JSON array of 100 with an Idempotency-Key each, as the SDK sends
 * them) and through one TrackingClient (flushAt 100), in the same run against the same service.
 * Memory: a client holding a full default queue (maxQueueSize items) against an address where
 * nothing listens, measured in a child process run with --expose-gc (bench/sdk-memory-child.ts).
 */

export interface SdkRow {
  scenario: string;
  items: number;
  requests: number;
  seconds: number;
  itemsPerSec: number;
  /** items/s over that of the direct bulk posts. */
  vsDirect: number | null;
  /** Items not stored (an error result, or a request not answered 200). */
  failed: number;
}

/** What the child measured: bytes held by the client, after a full GC, over those before it was made. */
export interface SdkMemory {
  items: number;
  /** JSON bytes of the items (what maxQueueBytes counts). */
  jsonBytes: number;
  heapUsedBytes: number;
  externalBytes: number;
  rssBytes: number;
  gcExposed: boolean;
}

export interface SdkOptions {
  serviceUrl: string;
  license: string;
  token: string;
  events: number;
}

const bulkSize = 100;
const warmupItems = 2_000;
const say = (line: string): void => void process.stderr.write(`${line}\n`);

/** `count` events, numbered from `first`: objects, as an application hands them over. */
function events(first: number, count: number): TrackedEvent[] {
  return Array.from({ length: count }, (_, i) => JSON.parse(eventBody(first + i)) as TrackedEvent);
}

/** Bulk posts of 100, one at a time, each with an Idempotency-Key. */
async function directPosts(options: SdkOptions, items: TrackedEvent[]): Promise<Omit<SdkRow, 'scenario' | 'vsDirect'>> {
  const url = `${options.serviceUrl}/v1/accounts/${options.license}/events/bulk`;
  let failed = 0;
  let requests = 0;
  const started = performance.now();
  for (let at = 0; at < items.length; at += bulkSize) {
    interrupted.throwIfAborted();
    const batch = items.slice(at, at + bulkSize);
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify(batch),
    });
    const reply = await response.text();
    requests += 1;
    failed += response.status === 200 ? (reply.match(/"status":"error"/g) ?? []).length : batch.length;
  }
  const seconds = (performance.now() - started) / 1000;
  return { items: items.length, requests, seconds, itemsPerSec: items.length / seconds, failed };
}

/** The items through one client, closed at the end; the caller waits rather than overfill the queue. */
async function throughClient(options: SdkOptions, items: TrackedEvent[], gzip: boolean): Promise<Omit<SdkRow, 'scenario' | 'vsDirect'>> {
  let requests = 0;
  const client = new TrackingClient({
    baseUrl: options.serviceUrl,
    licenseCode: options.license,
    accessToken: options.token,
    flushAt: bulkSize,
    ...(gzip ? {} : { gzipAboveBytes: Infinity }),
    fetch: (input, init) => {
      requests += 1;
      return fetch(input, init);
    },
  });
  // The default maxQueueSize; one kind, whose items settle in order.
  const window = 10_000;
  const results: Promise<ItemResult>[] = [];
  const started = performance.now();
  for (const [i, item] of items.entries()) {
    if (i >= window) await results[i - window];
    results.push(client.track(item));
  }
  await client.close();
  const seconds = (performance.now() - started) / 1000;
  const failed = (await Promise.all(results)).filter((result) => result.status !== 'queued').length;
  return { items: items.length, requests, seconds, itemsPerSec: items.length / seconds, failed };
}

export async function measureSdkThroughput(options: SdkOptions): Promise<SdkRow[]> {
  say(`sdk: warming up (${warmupItems.toLocaleString('en-US')} events each way)`);
  await directPosts(options, events(0, warmupItems));
  await throughClient(options, events(warmupItems, warmupItems), true);
  let next = 2 * warmupItems;
  const pass = async (name: string, run: (items: TrackedEvent[]) => Promise<Omit<SdkRow, 'scenario' | 'vsDirect'>>): Promise<SdkRow> => {
    interrupted.throwIfAborted();
    say(`sdk: ${name} (${options.events.toLocaleString('en-US')} events)`);
    const items = events(next, options.events);
    next += options.events;
    return { scenario: name, vsDirect: null, ...(await run(items)) };
  };
  const rows = [
    await pass(`direct bulk posts x${bulkSize}, one at a time`, (items) => directPosts(options, items)),
    await pass(`one TrackingClient, flushAt ${bulkSize} (gzip above 1 KiB, default)`, (items) => throughClient(options, items, true)),
    await pass(`one TrackingClient, flushAt ${bulkSize}, gzipAboveBytes Infinity`, (items) => throughClient(options, items, false)),
  ];
  const direct = rows[0]?.itemsPerSec ?? 0;
  for (const row of rows) row.vsDirect = direct > 0 ? row.itemsPerSec / direct : null;
  return rows;
}

/** The memory of a client holding a full default queue, measured in a child process with --expose-gc. */
export async function measureSdkMemory(root: string): Promise<SdkMemory> {
  say('sdk: a client holding a full default queue (child process, --expose-gc)');
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', join(root, 'dist', 'bench', 'sdk-memory-child.js')], { cwd: root, timeout: 60_000 });
  return JSON.parse(stdout) as SdkMemory;
}

const whole = (value: number): string => Math.round(value).toLocaleString('en-US');
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(2);

/** Prints the SDK tables; returns true when an item was not stored. */
export function printSdk(rows: SdkRow[], memory: SdkMemory | null): boolean {
  console.log('\nsdk: events to the service\'s events/bulk, one request at a time (the SDK sends one batch of a kind at a time); service with PROJECTIONS=off');
  const header = ['scenario', 'events', 'requests', 'seconds', 'items/s', 'vs direct', 'failed'];
  console.log(table(header, rows.map((r) => [r.scenario, whole(r.items), whole(r.requests), r.seconds.toFixed(1), whole(r.itemsPerSec), r.vsDirect === null ? '-' : r.vsDirect.toFixed(2), String(r.failed)])));
  console.log('(the same kind of events, a fresh range per row, after a warm-up; items/s from the first call to close() settled, or from the first post to the last reply)');
  if (memory) {
    console.log(`\nsdk memory: one client holding a full default queue (${whole(memory.items)} events, ${mib(memory.jsonBytes)} MiB of JSON) against an address where nothing listens`);
    const perItem = (bytes: number): string => whole(bytes / memory.items);
    console.log(
      table(
        ['measure', 'MiB', 'bytes/item'],
        [
          ['heap used', mib(memory.heapUsedBytes), perItem(memory.heapUsedBytes)],
          ['external (buffers)', mib(memory.externalBytes), perItem(memory.externalBytes)],
          ['rss', mib(memory.rssBytes), perItem(memory.rssBytes)],
        ],
      ),
    );
    console.log(`(process.memoryUsage() after the queue filled over before the client was made${memory.gcExposed ? ', each after a full GC' : ', WITHOUT a forced GC: rough'})`);
  }
  const bad = rows.filter((r) => r.failed > 0);
  for (const r of bad) console.log(`FAILED in sdk ${r.scenario}: ${r.failed} items not stored`);
  return bad.length > 0;
}

/** The SDK group, on a data directory of its own, beside the service with PROJECTIONS=off. */
export async function sdkGroup(root: string, dataDir: string, adminToken: string, children: Child[], events: number): Promise<{ rows: SdkRow[]; memory: SdkMemory }> {
  setPhase('sdk');
  const service = await startService('service (sdk)', dataDir, adminToken, children, { projections: false });
  try {
    const account = await createAccount(service.url, adminToken, 'SDK');
    const rows = await measureSdkThroughput({ serviceUrl: service.url, license: account.licenseCode, token: account.accessToken, events });
    return { rows, memory: await measureSdkMemory(root) };
  } finally {
    await stopService(service);
  }
}
