import { allQueued } from './bodies.js';
import { interrupted, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { load, measure, type Scenario, type Target } from './load.js';
import { table, type Row, type TargetLine } from './report.js';
import { setPhase } from './rss.js';
import { median } from './sealing.js';
import { createAccount, postAll, startService, stopService } from './service.js';
import { say, settings } from './settings.js';

/*
 * Segment's tracking API (POST /v1/batch, src/http/segment-routes.ts) against the spec's bulk
 * endpoints, per item, on one service with PROJECTIONS=off (the API alone, as the ingest group's
 * bulk rows). One account; its 10,000 persons are first posted with users/bulk (not measured), so
 * every scenario names known persons with profiles. A warm-up pass runs each of the five scenarios
 * for BENCH_WARMUP seconds; then BENCH_SEGMENT_ROUNDS (2) rounds of them, the order flipped every
 * round, each measured for BENCH_SEGMENT_SECONDS (6) after a second's warm-up:
 *  - events/bulk x100: 100 events, one per person (the reference of a track);
 *  - users/bulk x100: 100 profiles of known persons (the reference of an identify);
 *  - /v1/batch x100, track: 100 track messages as @segment/analytics-node sends them (messageId,
 *    context.library, integrations, _metadata, timestamp; the batch's sentAt and writeKey; HTTP
 *    Basic with the access token as user name), the same events as events/bulk's;
 *  - /v1/batch x100, 10% identify: 90 tracks and 10 identifies whose traits are users/bulk's profile;
 *  - /v1/batch x500, track: analytics-go and analytics-java send 250 and more a batch (events/bulk
 *    takes at most 100). On BENCH_CONNECTIONS / 5 connections, so that as many messages are in
 *    flight as in the x100 scenarios (and the service's body budget takes them all).
 * Each request names its own persons (10,000 / size bodies in turn, as many or more than its
 * connections, so two requests in flight never share a stream); every messageId is new. Judged:
 * items/s of each batch over events/bulk's of the same round (the mix over the blend of events/bulk
 * and users/bulk the mix would take at their rates); also reported: the same by the service's CPU
 * per item, which other work on the machine sways less.
 */

const run = Date.now().toString(36);
const persons = 10_000;
const identifyShare = 0.1;
const goal = 0.7;
const libraryVersion = '3.1.0';
const seedConcurrency = 4;

const eventNames = ['Viewed Pricing', 'Added To Cart', 'Checkout Started'];
const plans = ['free', 'pro', 'team', 'enterprise'];
const cities = ['Berlin', 'Lisbon', 'Austin', 'Osaka', 'Lagos'];

export const segmentScenarioNames = {
  eventsBulk: 'events/bulk x100',
  usersBulk: 'users/bulk x100',
  batchTrack: '/v1/batch x100, track',
  batchMix: '/v1/batch x100, 10% identify',
  batchLarge: '/v1/batch x500, track',
} as const;

type ScenarioKey = keyof typeof segmentScenarioNames;
const order: ScenarioKey[] = ['eventsBulk', 'batchTrack', 'batchMix', 'usersBulk', 'batchLarge'];

const personId = (k: number): string => `seg-${run}-${k}`;

/** The same 4 fields events/bulk's events have (bench/bodies.ts), as a track's properties. */
const properties = (k: number): Record<string, unknown> => ({ page: `/products/${k % 300}`, referrer: 'google', value: 19.99, items: 1 + (k % 4) });

/** A person's profile fields: what users/bulk sends, and an identify's traits become. */
const profile = (k: number): { email: string; firstName: string; lastName: string; city: string; plan: string; logins: number } => ({
  email: `person${k}@example.com`,
  firstName: 'Ann',
  lastName: `Tester ${k % 1000}`,
  city: cities[k % cities.length] as string,
  plan: plans[k % plans.length] as string,
  logins: k % 50,
});

export function userItem(k: number): Record<string, unknown> {
  const { plan, logins, ...fields } = profile(k);
  return { userId: personId(k), ...fields, attributes: { plan, logins } };
}

export const eventItem = (k: number): Record<string, unknown> => ({ userId: personId(k), eventName: eventNames[k % 3], eventTime: '2024-05-01T12:30:00.123+02:00', eventData: properties(k) });

/** Marks in a batch's text, replaced for each request: its own id, its messages' timestamp, its sentAt. */
const marks = { request: '@R@', timestamp: '@T@', sentAt: '@S@' } as const;
const markPattern = /(@[RTS]@)/;

/** A message as @segment/analytics-node 3 posts it (analytics-core's event factory, its node plugin). */
function message(type: 'track' | 'identify', k: number, i: number): Record<string, unknown> {
  const common = {
    timestamp: marks.timestamp,
    context: { library: { name: '@segment/analytics-node', version: libraryVersion } },
    integrations: {},
    messageId: `node-next-${marks.request}-${String(i).padStart(4, '0')}`,
    _metadata: { nodeVersion: 'v24.9.0', jsRuntime: 'node' },
  };
  if (type === 'track') return { event: eventNames[k % 3], type: 'track', properties: properties(k), userId: personId(k), ...common };
  return { type: 'identify', userId: personId(k), traits: profile(k), ...common };
}

/**
 * Bodies of `size` messages over the persons, `bodies` of them in turn; request n gets body
 * n % bodies with its own messageIds (`tag` keeps rounds apart), a timestamp a second before its
 * sentAt, both the time it is sent.
 */
export function batchBodies(size: number, identifyEvery: number | null, writeKey: string, tag: string): { body: (n: number) => string; bytes: number } {
  const count = persons / size;
  const templates = Array.from({ length: count }, (_, b) => {
    const batch = Array.from({ length: size }, (_, i) => message(identifyEvery !== null && i % identifyEvery === identifyEvery - 1 ? 'identify' : 'track', b * size + i, i));
    return JSON.stringify({ batch, writeKey, sentAt: marks.sentAt }).split(markPattern);
  });
  const body = (n: number): string => {
    const sentAt = Date.now();
    const values: Record<string, string> = { [marks.request]: `${tag}-${n}`, [marks.timestamp]: new Date(sentAt - 1_000).toISOString(), [marks.sentAt]: new Date(sentAt).toISOString() };
    const parts = templates[n % count] as string[];
    let text = '';
    for (let p = 0; p < parts.length; p++) text += p % 2 === 1 ? values[parts[p] as string] : parts[p];
    return text;
  };
  return { body, bytes: Buffer.byteLength(body(0)) };
}

/** Bulk bodies of 100 items over the persons, 100 in turn. */
export function bulkBodies(item: (k: number) => Record<string, unknown>): string[] {
  return Array.from({ length: persons / 100 }, (_, b) => JSON.stringify(Array.from({ length: 100 }, (_, i) => item(b * 100 + i))));
}

export interface SegmentRow {
  round: number;
  key: ScenarioKey;
  /** Bytes of a request's body over its items. */
  bytesPerItem: number;
  row: Row;
}

export interface SegmentSummary {
  key: ScenarioKey;
  scenario: string;
  itemsPerSec: number;
  reqPerSec: number;
  p99Ms: number;
  bytesPerItem: number;
  /** CPU time of the service and of PostgreSQL per item, in microseconds (median of the rounds). */
  nodeMicrosPerItem: number;
  pgMicrosPerItem: number;
  /** Median of the rounds' items/s over events/bulk's of the same round, and each round's. */
  vsEventsBulk: number;
  roundsVsEventsBulk: number[];
  /**
   * The same judged by the service's CPU: events/bulk's µs per item over this scenario's, each
   * round. The service is CPU-bound, so this is the rate it would reach with a core of its own;
   * it swings less than items/s when other work takes the machine's cores.
   */
  vsEventsBulkByCpu: number;
  roundsVsEventsBulkByCpu: number[];
  /** The mix only: over the blend of events/bulk and users/bulk of its round. */
  vsBlend: number | null;
  roundsVsBlend: number[];
}

export interface SegmentResult {
  rounds: number;
  seconds: number;
  persons: number;
  rows: SegmentRow[];
  summary: SegmentSummary[];
}

/** Items/s of a mix of 90% events and 10% users at the rates events/bulk and users/bulk reached. */
const blendOf = (events: number, users: number): number => 1 / ((1 - identifyShare) / events + identifyShare / users);

export async function segmentGroup(dataDir: string, adminToken: string, children: Child[]): Promise<SegmentResult> {
  setPhase('segment: start');
  const service = await startService('service (segment)', dataDir, adminToken, children, { projections: false });
  const rows: SegmentRow[] = [];
  try {
    const account = await createAccount(service.url, adminToken, 'Segment');
    const base = `/v1/accounts/${account.licenseCode}`;
    const userBodies = bulkBodies(userItem);
    const eventBodies = bulkBodies(eventItem);
    say(`segment: posting the ${persons.toLocaleString('en-US')} persons with users/bulk (not measured)`);
    await postAll(`${service.url}${base}/users/bulk`, account.accessToken, userBodies, seedConcurrency);
    const pgPid = await postmasterPid(dataDir);
    const common = { url: service.url, child: service.child, worker: null, pgPid, store: null };
    const spec: Target = { ...common, headers: { 'content-type': 'application/json', authorization: `Bearer ${account.accessToken}` } };
    const segment: Target = {
      ...common,
      headers: { 'content-type': 'application/json', 'user-agent': 'analytics-node-next/latest', authorization: `Basic ${Buffer.from(`${account.accessToken}:`).toString('base64')}` },
    };
    const config = 'PROJECTIONS=off';
    // The pass below warmed every path: each measure then only fills the connections again.
    const window = { warmupSeconds: Math.min(1, settings.warmupSeconds), durationSeconds: settings.segmentSeconds };
    const largeConnections = Math.max(1, Math.round(settings.connections / 5));
    const scenarioOf = (key: ScenarioKey, round: number): { scenario: Scenario; target: Target; bytesPerItem: number } => {
      const name = segmentScenarioNames[key];
      const tag = `r${round}${key}`;
      const fixed = (path: string, bodies: string[]): Scenario => ({ name, config, path, items: 100, bulkKind: null, body: (n) => bodies[n % bodies.length] as string, verify: allQueued });
      const batch = (size: number, identifyEvery: number | null, connections?: number): { scenario: Scenario; target: Target; bytesPerItem: number } => {
        const bodies = batchBodies(size, identifyEvery, account.accessToken, tag);
        return {
          scenario: { name, config, path: '/v1/batch', items: size, bulkKind: null, body: bodies.body, verify: allQueued, ...(connections !== undefined && { connections }) },
          target: segment,
          bytesPerItem: bodies.bytes / size,
        };
      };
      switch (key) {
        case 'eventsBulk':
          return { scenario: fixed(`${base}/events/bulk`, eventBodies), target: spec, bytesPerItem: Buffer.byteLength(eventBodies[0] as string) / 100 };
        case 'usersBulk':
          return { scenario: fixed(`${base}/users/bulk`, userBodies), target: spec, bytesPerItem: Buffer.byteLength(userBodies[0] as string) / 100 };
        case 'batchTrack':
          return batch(100, null);
        case 'batchMix':
          return batch(100, Math.round(1 / identifyShare));
        case 'batchLarge':
          return batch(500, null, largeConnections);
      }
    };
    // Every scenario once before the rounds, so that the first round does not meet the Segment path
    // (its code, the heap it grows to) cold while the spec's was warmed by the seeding.
    for (const key of order) {
      interrupted.throwIfAborted();
      const { scenario, target } = scenarioOf(key, 0);
      say(`segment warm-up pass: ${scenario.name} (${settings.warmupSeconds} s)`);
      if (settings.warmupSeconds > 0) await load(target, scenario, settings.warmupSeconds, { n: 0 });
    }
    for (let round = 1; round <= settings.segmentRounds; round++) {
      const keys = round % 2 === 1 ? order : [...order].reverse();
      for (const key of keys) {
        interrupted.throwIfAborted();
        const { scenario, target, bytesPerItem } = scenarioOf(key, round);
        say(`segment round ${round}: ${scenario.name}${scenario.connections === undefined ? '' : ` on ${scenario.connections} connections`}`);
        rows.push({ round, key, bytesPerItem, row: await measure(scenario, target, window) });
      }
    }
  } finally {
    await stopService(service);
  }
  return { rounds: settings.segmentRounds, seconds: settings.segmentSeconds, persons, rows, summary: summarise(rows) };
}

const microsPerItem = (cores: number | null, itemsPerSec: number): number => (cores === null || itemsPerSec <= 0 ? NaN : (cores / itemsPerSec) * 1e6);

export function summarise(rows: readonly SegmentRow[]): SegmentSummary[] {
  const of = (key: ScenarioKey, round: number): Row | undefined => rows.find((r) => r.key === key && r.round === round)?.row;
  return order.map((key): SegmentSummary => {
    const mine = rows.filter((r) => r.key === key);
    const roundsVsEventsBulk = mine.flatMap(({ round, row }) => {
      const events = of('eventsBulk', round);
      return events && events.itemsPerSec > 0 ? [row.itemsPerSec / events.itemsPerSec] : [];
    });
    const roundsVsEventsBulkByCpu = mine.flatMap(({ round, row }) => {
      const events = of('eventsBulk', round);
      const [theirs, ours] = [events ? microsPerItem(events.cpuCores.node, events.itemsPerSec) : NaN, microsPerItem(row.cpuCores.node, row.itemsPerSec)];
      return Number.isNaN(theirs) || Number.isNaN(ours) ? [] : [theirs / ours];
    });
    const roundsVsBlend =
      key === 'batchMix'
        ? mine.flatMap(({ round, row }) => {
            const [events, users] = [of('eventsBulk', round), of('usersBulk', round)];
            return events && users && events.itemsPerSec > 0 && users.itemsPerSec > 0 ? [row.itemsPerSec / blendOf(events.itemsPerSec, users.itemsPerSec)] : [];
          })
        : [];
    return {
      key,
      scenario: segmentScenarioNames[key],
      itemsPerSec: median(mine.map((r) => r.row.itemsPerSec)),
      reqPerSec: median(mine.map((r) => r.row.reqPerSec)),
      p99Ms: median(mine.map((r) => r.row.p99Ms)),
      bytesPerItem: median(mine.map((r) => r.bytesPerItem)),
      nodeMicrosPerItem: median(mine.map((r) => microsPerItem(r.row.cpuCores.node, r.row.itemsPerSec))),
      pgMicrosPerItem: median(mine.map((r) => microsPerItem(r.row.cpuCores.postgres, r.row.itemsPerSec))),
      vsEventsBulk: median(roundsVsEventsBulk),
      roundsVsEventsBulk,
      vsEventsBulkByCpu: median(roundsVsEventsBulkByCpu),
      roundsVsEventsBulkByCpu,
      vsBlend: key === 'batchMix' ? median(roundsVsBlend) : null,
      roundsVsBlend,
    };
  });
}

const whole = (value: number): string => (Number.isNaN(value) ? '-' : Math.round(value).toLocaleString('en-US'));
const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));

/** Prints every run and the medians; returns true when a response failed. */
export function printSegment(result: SegmentResult): boolean {
  console.log(
    `\nSegment's /v1/batch against events/bulk and users/bulk: PROJECTIONS=off, ${result.persons.toLocaleString('en-US')} known persons, ${result.rounds} rounds of ${result.seconds} s each scenario, the order flipped every round`,
  );
  const header = ['scenario', 'round', 'conns', 'req/s', 'items/s', 'p50 ms', 'p99 ms', 'failed', 'B/item', 'node µs/item', 'pg µs/item', 'CPU node', 'CPU pg', 'CPU loadgen', 'CPU other'];
  console.log(
    table(
      header,
      result.rows.map(({ round, bytesPerItem, row: r }) => [
        r.scenario,
        String(round),
        String(r.scenario === segmentScenarioNames.batchLarge ? Math.max(1, Math.round(settings.connections / 5)) : settings.connections),
        whole(r.reqPerSec),
        whole(r.itemsPerSec),
        r.p50Ms.toFixed(1),
        r.p99Ms.toFixed(1),
        String(r.notQueued + r.errors),
        whole(bytesPerItem),
        fixed(microsPerItem(r.cpuCores.node, r.itemsPerSec), 1),
        fixed(microsPerItem(r.cpuCores.postgres, r.itemsPerSec), 1),
        fixed(r.cpuCores.node, 2),
        fixed(r.cpuCores.postgres, 2),
        fixed(r.cpuCores.loadgen, 2),
        fixed(r.cpuCores.other, 2),
      ]),
    ),
  );
  const summaryHeader = ['scenario', 'items/s', 'vs events/bulk', 'each round', 'by node CPU', 'each round', 'vs blend', 'each round', 'node µs/item', 'pg µs/item', 'p99 ms'];
  console.log(
    table(
      summaryHeader,
      result.summary.map((s) => [
        s.scenario,
        whole(s.itemsPerSec),
        fixed(s.vsEventsBulk, 2),
        s.roundsVsEventsBulk.map((r) => r.toFixed(2)).join(' '),
        fixed(s.vsEventsBulkByCpu, 2),
        s.roundsVsEventsBulkByCpu.map((r) => r.toFixed(2)).join(' '),
        fixed(s.vsBlend, 2),
        s.roundsVsBlend.map((r) => r.toFixed(2)).join(' '),
        fixed(s.nodeMicrosPerItem, 1),
        fixed(s.pgMicrosPerItem, 1),
        s.p99Ms.toFixed(1),
      ]),
    ),
  );
  console.log('(items/s: medians of the rounds; vs events/bulk: items/s over events/bulk x100\'s of the same round, the median of the rounds; vs blend: the mix over');
  console.log(` 1 / (${1 - identifyShare} / events/bulk + ${identifyShare} / users/bulk) of its round; by node CPU: events/bulk's node µs/item over the scenario's, the rate each would reach with a core`);
  console.log(' of its own (the service is CPU-bound); µs/item: CPU of the service or PostgreSQL over items/s; B/item: body bytes per item)');
  const bad = result.rows.map((r) => r.row).filter((r) => r.notQueued > 0 || r.errors > 0);
  for (const r of bad) console.log(`FAILED RESPONSES in ${r.scenario} (${r.config}): ${r.non2xx} non-2xx, ${r.notQueued} not queued, ${r.errors} errors`);
  return bad.length > 0;
}

export function segmentTargetLines(result: SegmentResult): TargetLine[] {
  const events = result.summary.find((s) => s.key === 'eventsBulk');
  return result.summary
    .filter((s) => s.key.startsWith('batch'))
    .map((s) => {
      const blend = s.vsBlend !== null;
      const ratio = blend ? s.vsBlend : s.vsEventsBulk;
      return {
        target: `Segment ${s.scenario}, against ${blend ? 'events/bulk and users/bulk x100 blended' : 'events/bulk x100'}, PROJECTIONS=off`,
        measured: `${whole(s.itemsPerSec)} items/s (median of ${result.rounds})`,
        ceiling: blend ? `vs events/bulk alone ${fixed(s.vsEventsBulk, 2)}` : `events/bulk ${whole(events?.itemsPerSec ?? NaN)} items/s`,
        ratio,
        goal: `>= ${goal}`,
        met: ratio === null || Number.isNaN(ratio) ? null : ratio >= goal,
        otherCores: Math.max(...result.rows.filter((r) => r.key === s.key).map((r) => r.row.cpuCores.other ?? 0)),
      };
    });
}
