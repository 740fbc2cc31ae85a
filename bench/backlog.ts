import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { projections } from '../projections/index.js';
import { interrupted, type Child } from './children.js';
import { postmasterPid } from './cpu.js';
import { coresBetween, cpuSnapshot } from './load.js';
import { storeUrl } from './projections.js';
import { table } from './report.js';
import { createAccount, postAll, startService, stopService, type RunningService } from './service.js';
import { say, settings } from './settings.js';

/*
 * A backlog of large events (docs/performance.md, Large-event backlog): one account's
 * BENCH_BACKLOG_EVENTS (12,000) events of about 8 KB of personal fields each (sealed, as by
 * default), posted in bulk with PROJECTIONS=off, then the service restarted as npm start runs it
 * and timed until every projection's cursor of the account is at its last event. Against it: the
 * same kind of events, a quarter as many, posted to another account while the projections run
 * (no backlog), timed from the first post until they are applied. Measured: events/s and MB/s
 * (of the events' JSON as posted) of each, and the ratio of the drain's rate to the live one's.
 */

export interface BacklogRate {
  what: 'backlog drained' | 'applied live';
  seconds: number;
  events: number;
  bytes: number;
  caughtUp: boolean;
  /** Live only: from the last post answered until every event was applied. */
  afterLastPostSeconds: number | null;
  cpu: { node: number | null; postgres: number | null; other: number | null };
}

export interface BacklogResult {
  eventBytes: number;
  fillSeconds: number;
  rates: BacklogRate[];
}

// Bodies of about 400 KB, sent one at a time: the live rate is then that of one client.
const bulkSize = 50;
const words = ['street', 'avenue', 'garden', 'order', 'invoice', 'parcel', 'return', 'gift', 'note', 'call', 'meeting', 'reminder', 'card', 'delivery'];

/** One event of about `bytes` bytes of eventData: a person's contact fields and notes, text that deflates to about 40% of it. */
function largeEvent(n: number, userId: string, bytes: number): Record<string, unknown> {
  const random = randomBytes(bytes).toString('hex');
  const notes: string[] = [];
  let length = 0;
  while (length < bytes - 300) {
    const word = `${words[(n * 7 + notes.length * 13) % words.length]}-${random.slice(notes.length * 6, notes.length * 6 + 6)}`;
    notes.push(word);
    length += word.length + 1;
  }
  return {
    userId,
    eventName: 'support_ticket',
    eventTime: new Date(Date.UTC(2024, 4, 1, 12, 0, n % 60)).toISOString(),
    eventData: { email: `${userId}@example.com`, phone: `+49 30 ${1_000_000 + n}`, address: `${n % 200} Main street, Berlin`, notes: notes.join(' ') },
  };
}

/** `events` events over 1,000 persons of `tag`, in bulk bodies of bulkSize. */
function bodies(tag: string, events: number): string[] {
  return Array.from({ length: Math.ceil(events / bulkSize) }, (_, b) =>
    JSON.stringify(Array.from({ length: Math.min(bulkSize, events - b * bulkSize) }, (_, i) => largeEvent(b * bulkSize + i, `backlog-${tag}-${(b * bulkSize + i) % 1_000}`, settings.backlogEventBytes))),
  );
}

/** Projections whose cursor of the account is not at its last event (no cursor yet counts as behind). */
async function accountBehind(db: pg.Pool, accountId: string): Promise<number> {
  const { rows } = await db.query<{ behind: number }>(
    `SELECT count(*) FILTER (WHERE c.checkpoint IS DISTINCT FROM h.head)::int AS behind
     FROM unnest($2::text[]) AS p(projection)
     CROSS JOIN (SELECT e.transaction_id::text || ':' || e.global_position AS head FROM events e WHERE e.account_id = $1
       ORDER BY e.transaction_id DESC, e.global_position DESC LIMIT 1) h
     LEFT JOIN projection_account_checkpoints c ON c.projection = p.projection AND c.account_id = $1`,
    [accountId, projections.map((p) => p.name)],
  );
  return rows[0]?.behind ?? projections.length;
}

/** Events of the account the slowest projection's cursor has passed (each cursor is a checkpoint 'xid:position'). */
async function passedBySlowest(db: pg.Pool, accountId: string): Promise<number> {
  const { rows } = await db.query<{ passed: number | null }>(
    `SELECT min(passed)::int AS passed FROM (
       SELECT (SELECT count(*) FROM events e WHERE e.account_id = $1
         AND (e.transaction_id, e.global_position) <= (split_part(c.checkpoint, ':', 1)::xid8, split_part(c.checkpoint, ':', 2)::bigint)) AS passed
       FROM projection_account_checkpoints c WHERE c.account_id = $1 AND c.checkpoint IS NOT NULL) cursors`,
    [accountId],
  );
  return rows[0]?.passed ?? 0;
}

async function accountIdOf(db: pg.Pool, licenseCode: string): Promise<string> {
  const { rows } = await db.query<{ id: string }>('SELECT id FROM accounts WHERE license_code = $1', [licenseCode]);
  return rows[0]?.id as string;
}

/** Waits until the account's cursors are all at its last event, or the limit passes; the seconds from `started`, and the events passed. */
async function untilApplied(db: pg.Pool, accountId: string, started: number, label: string, events: number): Promise<{ seconds: number; caughtUp: boolean; events: number }> {
  let lastSaid = started;
  for (;;) {
    interrupted.throwIfAborted();
    const now = performance.now();
    if ((await accountBehind(db, accountId)) === 0) return { seconds: (performance.now() - started) / 1000, caughtUp: true, events };
    // Cut short: the rate is of the events passed so far.
    if (now - started > settings.projectionLimitSeconds * 1000) return { seconds: (now - started) / 1000, caughtUp: false, events: await passedBySlowest(db, accountId) };
    if (now - lastSaid > 5_000) {
      lastSaid = now;
      const { rows } = await db.query<{ projection: string; applied: number }>('SELECT projection, events_applied::int AS applied FROM projection_account_checkpoints WHERE account_id = $1 ORDER BY 1', [accountId]);
      say(`  ${label}: ${rows.map((r) => `${r.projection} ${r.applied}`).join(', ')} (${((now - started) / 1000).toFixed(0)} s)`);
    }
    await sleep(20);
  }
}

/**
 * A connection to the service left idle longer than its keep-alive may be closed as it is reused
 * (the request then fails): a look at /healthz, taken twice, leaves a fresh one.
 */
async function freshConnection(url: string): Promise<void> {
  await fetch(`${url}/healthz`).then((response) => response.arrayBuffer(), () => undefined);
  await (await fetch(`${url}/healthz`)).arrayBuffer();
}

export async function backlogGroup(dataDir: string, adminToken: string, children: Child[]): Promise<BacklogResult> {
  const total = settings.backlogEvents;
  const backlogBodies = bodies('b', total);
  const live = Math.max(bulkSize, Math.round(total / 4));
  const liveBodies = bodies('l', live);
  let service: RunningService = await startService('backlog-fill', dataDir, adminToken, children, { projections: false });
  const db = new pg.Pool({ connectionString: await storeUrl(dataDir), max: 2 });
  try {
    const backlogAccount = await createAccount(service.url, adminToken, 'Backlog');
    const liveAccount = await createAccount(service.url, adminToken, 'Live');
    const eventBytes = backlogBodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
    say(`backlog: posting ${total.toLocaleString('en-US')} events of ${Math.round(eventBytes / total).toLocaleString('en-US')} bytes in bulk of ${bulkSize}, PROJECTIONS=off`);
    const fillStarted = performance.now();
    await postAll(`${service.url}/v1/accounts/${backlogAccount.licenseCode}/events/bulk`, backlogAccount.accessToken, backlogBodies, 1);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    await stopService(service);
    const rates: BacklogRate[] = [];
    // The service as npm start runs it: its projection thread finds the backlog and drains it.
    const liveBytes = liveBodies.reduce((sum, body) => sum + Buffer.byteLength(body), 0);
    const restarted = performance.now();
    service = await startService('backlog-service', dataDir, adminToken, children);
    const target = { url: service.url, headers: {}, child: service.child, worker: null, pgPid: await postmasterPid(dataDir), store: null };
    let before = await cpuSnapshot(target);
    const drained = await untilApplied(db, await accountIdOf(db, backlogAccount.licenseCode), restarted, 'backlog', total);
    let cpu = coresBetween(before, await cpuSnapshot(target), drained.seconds);
    rates.push({ what: 'backlog drained', bytes: (eventBytes * drained.events) / total, ...drained, afterLastPostSeconds: null, cpu: { node: cpu.node, postgres: cpu.postgres, other: cpu.other } });
    say(`backlog: drained in ${drained.seconds.toFixed(1)} s (service start included)`);
    await freshConnection(service.url);
    before = await cpuSnapshot(target);
    const posted = performance.now();
    await postAll(`${service.url}/v1/accounts/${liveAccount.licenseCode}/events/bulk`, liveAccount.accessToken, liveBodies, 1);
    const lastPost = performance.now();
    const applied = await untilApplied(db, await accountIdOf(db, liveAccount.licenseCode), posted, 'live', live);
    cpu = coresBetween(before, await cpuSnapshot(target), applied.seconds);
    rates.push({ what: 'applied live', bytes: (liveBytes * applied.events) / live, ...applied, afterLastPostSeconds: applied.seconds - (lastPost - posted) / 1000, cpu: { node: cpu.node, postgres: cpu.postgres, other: cpu.other } });
    return { eventBytes: Math.round(eventBytes / total), fillSeconds, rates };
  } finally {
    await db.end();
    await stopService(service);
  }
}

const fixed = (value: number | null, digits: number): string => (value === null || Number.isNaN(value) ? '-' : value.toFixed(digits));

/** Prints the two rates and their ratio; true when either did not finish within the limit. */
export function printBacklog(r: BacklogResult): boolean {
  console.log(`\nlarge-event backlog: events of ${r.eventBytes.toLocaleString('en-US')} bytes (sealed) drained after a restart vs applied as they arrive (posted in ${r.fillSeconds.toFixed(0)} s)`);
  const live = r.rates.find((rate) => rate.what === 'applied live');
  const mbps = (rate: BacklogRate): number => rate.bytes / 2 ** 20 / rate.seconds;
  const lines = r.rates.map((rate) => [
    rate.what,
    rate.events.toLocaleString('en-US'),
    Math.round(rate.events / rate.seconds).toLocaleString('en-US'),
    fixed(mbps(rate), 1),
    fixed(rate.seconds, 1),
    fixed(rate.afterLastPostSeconds, 2),
    rate.what === 'backlog drained' && live ? fixed(mbps(rate) / mbps(live), 2) : '',
    fixed(rate.cpu.node, 2),
    fixed(rate.cpu.postgres, 2),
    fixed(rate.cpu.other, 2),
  ]);
  console.log(table(['measure', 'events', 'events/s', 'MB/s', 'seconds', 'after last post', 'vs live', 'CPU node', 'CPU pg', 'CPU other'], lines));
  console.log('(the drain is timed from the restart, the service\'s start included; live from the first post, one bulk request at a time,');
  console.log(' so its rate is the ingest\'s and "after last post" what applying still took; MB/s of the events\' JSON as posted)');
  const short = r.rates.filter((rate) => !rate.caughtUp);
  for (const rate of short) console.log(`PROBLEM: ${rate.what} did not finish within ${settings.projectionLimitSeconds} s`);
  return short.length > 0;
}
