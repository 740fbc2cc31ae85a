import { isUnavailableError } from '../db/errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import * as sql from './activity-sql.js';
import type { Excerpt } from './excerpt.js';
import type { Endpoint } from './request.js';

/** An item an account's ingest refused: what the client was told, and what it sent. */
export interface RejectedItem {
  endpoint: Endpoint;
  reason: string;
  /** The HTTP status of the reply (200 for an element of a bulk request). */
  status: number;
  message: string;
  /** Null when nothing of the body was read (413 over the declared length, 415, 429). */
  excerpt: Excerpt | null;
}

export interface ActivitySettings {
  flushEveryMs: number;
  /** Rejected items kept per account (the latest). */
  itemsPerAccount: number;
  /** Memory for rejected items waiting to be written; one account may fill at most half of it. */
  maxPendingItemBytes: number;
  /** Counters waiting to be written (account, minute or hour, endpoint, reason). */
  maxPendingCounts: number;
  /** How often rows past their retention are deleted. */
  pruneEveryMs: number;
}

export const defaultActivitySettings: ActivitySettings = {
  flushEveryMs: 1_000,
  itemsPerAccount: 1_000,
  maxPendingItemBytes: 1024 * 1024,
  maxPendingCounts: 10_000,
  pruneEveryMs: 10 * 60 * 1000,
};

interface MinuteCount {
  accountId: string;
  minute: number;
  endpoint: string;
  accepted: number;
  rejected: number;
}

interface HourlyRejections {
  accountId: string;
  hour: number;
  endpoint: string;
  reason: string;
  count: number;
  lastSeen: number;
}

interface PendingItem extends RejectedItem {
  accountId: string;
  at: number;
  bytes: number;
}

/** What the recorder uses of a `pg.Pool` (a test gives a failing stand-in). */
export interface ActivityClient {
  query(text: string, values?: unknown[]): Promise<unknown>;
  release(error?: Error | boolean): void;
}
export interface ActivityDatabase {
  connect(): Promise<ActivityClient>;
  query(text: string): Promise<unknown>;
}

/** What was taken to be written: the counts and items pending at one tick. */
class Pending {
  readonly minutes = new Map<string, MinuteCount>();
  readonly hours = new Map<string, HourlyRejections>();
  readonly items: PendingItem[] = [];
  itemBytes = 0;
  readonly itemBytesByAccount = new Map<string, number>();

  get counts(): number {
    return this.minutes.size + this.hours.size;
  }
}

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
/** Memory of a pending item besides its text (two bytes per UTF-16 unit). */
const itemOverheadBytes = 200;

/**
 * Remembers what each account's ingest accepted and rejected (docs/api.md, "Ingestion warnings"
 * and "Overview"). Requests only add to counters and a list in memory; a timer writes them once a
 * second in one transaction, so nothing on the request path waits for the database. The memory is
 * bounded: past `maxPendingItemBytes` rejected items are dropped (still counted), past
 * `maxPendingCounts` new counters are dropped. A database that cannot be reached keeps them for the
 * next tick, within those bounds.
 */
export class IngestActivity {
  private pending = new Pending();
  private readonly settings: ActivitySettings;
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;
  private lastPrune = Date.now();
  private failing = false;
  private warnedDrop = false;
  private closed = false;

  constructor(
    private readonly db: ActivityDatabase,
    private readonly log: Logger,
    settings: Partial<ActivitySettings> = {},
    private readonly metrics?: Metrics,
  ) {
    this.settings = { ...defaultActivitySettings, ...settings };
    this.timer = setInterval(() => void this.flush(), this.settings.flushEveryMs).unref();
  }

  /** Items of `endpoint` stored and answered queued. */
  accepted(accountId: string, endpoint: Endpoint, items = 1, at = Date.now()): void {
    const count = this.minuteCount(this.pending, accountId, at - (at % minuteMs), endpoint);
    if (count) count.accepted += items;
  }

  rejected(accountId: string, item: RejectedItem, at = Date.now()): void {
    const count = this.minuteCount(this.pending, accountId, at - (at % minuteMs), item.endpoint);
    if (count) count.rejected += 1;
    const hourly = this.hourly(this.pending, accountId, at - (at % hourMs), item.endpoint, item.reason);
    if (hourly) {
      hourly.count += 1;
      hourly.lastSeen = Math.max(hourly.lastSeen, at);
    }
    const bytes = itemOverheadBytes + 2 * (item.message.length + (item.excerpt?.text.length ?? 0));
    this.keepItem(this.pending, { ...item, accountId, at, bytes });
  }

  /** Bytes of the rejected items waiting to be written. */
  get pendingItemBytes(): number {
    return this.pending.itemBytes;
  }

  get pendingCounts(): number {
    return this.pending.counts;
  }

  /** Writes what is pending (the timer calls it every second); one write at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Deletes rows past their retention: per-minute counts after 7 days, rejections after 30. */
  async pruneExpired(): Promise<void> {
    for (const statement of sql.deleteExpired) await this.db.query(statement);
  }

  /** Stops the timer and writes what is pending: before the pool ends. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private async write(): Promise<void> {
    const batch = this.pending;
    if (batch.counts === 0 && batch.items.length === 0) return this.pruneNowAndThen();
    this.pending = new Pending();
    try {
      await this.writeBatch(batch);
      if (this.failing) this.log.info('ingest activity recorded again');
      this.failing = false;
      this.warnedDrop = false;
    } catch (error) {
      if (isUnavailableError(error) && !this.closed) {
        if (!this.failing) this.log.warn({ err: error }, 'ingest activity not recorded: the database is unavailable; kept in memory (bounded) and retried every second');
        this.failing = true;
        this.restore(batch);
      } else {
        this.log.error({ err: error, counts: batch.counts, items: batch.items.length }, 'ingest activity not recorded: dropped');
      }
      return;
    }
    await this.pruneNowAndThen();
  }

  private async pruneNowAndThen(): Promise<void> {
    if (Date.now() - this.lastPrune < this.settings.pruneEveryMs) return;
    this.lastPrune = Date.now();
    await this.pruneExpired().catch((error: unknown) => this.log.warn({ err: error }, 'expired ingest activity not deleted'));
  }

  private async writeBatch(batch: Pending): Promise<void> {
    const minutes = [...batch.minutes.values()];
    const hours = [...batch.hours.values()];
    const items = this.latestPerAccount(batch.items);
    const iso = (ms: number): string => new Date(ms).toISOString();
    const client = await this.db.connect();
    try {
      await client.query('BEGIN');
      if (minutes.length > 0) {
        await client.query(sql.addMinuteCounts, [
          minutes.map((m) => m.accountId),
          minutes.map((m) => iso(m.minute)),
          minutes.map((m) => m.endpoint),
          minutes.map((m) => m.accepted),
          minutes.map((m) => m.rejected),
        ]);
      }
      if (hours.length > 0) {
        await client.query(sql.addHourlyRejections, [
          hours.map((h) => h.accountId),
          hours.map((h) => iso(h.hour)),
          hours.map((h) => h.endpoint),
          hours.map((h) => h.reason),
          hours.map((h) => h.count),
          hours.map((h) => iso(h.lastSeen)),
        ]);
      }
      if (items.length > 0) {
        await client.query(sql.insertRejectedItems, [
          items.map((i) => i.accountId),
          items.map((i) => iso(i.at)),
          items.map((i) => i.endpoint),
          items.map((i) => i.reason),
          items.map((i) => i.status),
          items.map((i) => i.message),
          items.map((i) => i.excerpt?.text ?? null),
          items.map((i) => i.excerpt?.truncated ?? false),
        ]);
        await client.query(sql.pruneRejectedItems, [[...new Set(items.map((i) => i.accountId))], this.settings.itemsPerAccount]);
      }
      await client.query('COMMIT');
      client.release();
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(error instanceof Error ? error : true);
      throw error;
    }
  }

  /** Only the latest `itemsPerAccount` of each account are kept: no use writing more. */
  private latestPerAccount(items: PendingItem[]): PendingItem[] {
    const seen = new Map<string, number>();
    const kept: PendingItem[] = [];
    for (let i = items.length - 1; i >= 0; i -= 1) {
      const item = items[i] as PendingItem;
      const n = (seen.get(item.accountId) ?? 0) + 1;
      seen.set(item.accountId, n);
      if (n <= this.settings.itemsPerAccount) kept.push(item);
    }
    return kept.reverse();
  }

  /** A batch the database refused comes back ahead of what came since, within the same bounds. */
  private restore(batch: Pending): void {
    const since = this.pending;
    this.pending = batch;
    for (const m of since.minutes.values()) {
      const count = this.minuteCount(batch, m.accountId, m.minute, m.endpoint);
      if (count) {
        count.accepted += m.accepted;
        count.rejected += m.rejected;
      }
    }
    for (const h of since.hours.values()) {
      const hourly = this.hourly(batch, h.accountId, h.hour, h.endpoint, h.reason);
      if (hourly) {
        hourly.count += h.count;
        hourly.lastSeen = Math.max(hourly.lastSeen, h.lastSeen);
      }
    }
    for (const item of since.items) this.keepItem(batch, item);
  }

  private minuteCount(into: Pending, accountId: string, minute: number, endpoint: string): MinuteCount | null {
    const key = `${accountId} ${minute} ${endpoint}`;
    let count = into.minutes.get(key);
    if (!count) {
      if (into.counts >= this.settings.maxPendingCounts) return this.dropped('count');
      count = { accountId, minute, endpoint, accepted: 0, rejected: 0 };
      into.minutes.set(key, count);
    }
    return count;
  }

  private hourly(into: Pending, accountId: string, hour: number, endpoint: string, reason: string): HourlyRejections | null {
    const key = `${accountId} ${hour} ${endpoint} ${reason}`;
    let hourly = into.hours.get(key);
    if (!hourly) {
      if (into.counts >= this.settings.maxPendingCounts) return this.dropped('count');
      hourly = { accountId, hour, endpoint, reason, count: 0, lastSeen: hour };
      into.hours.set(key, hourly);
    }
    return hourly;
  }

  private keepItem(into: Pending, item: PendingItem): void {
    const ofAccount = into.itemBytesByAccount.get(item.accountId) ?? 0;
    if (into.itemBytes + item.bytes > this.settings.maxPendingItemBytes || ofAccount + item.bytes > this.settings.maxPendingItemBytes / 2) {
      this.dropped('item');
      return;
    }
    into.items.push(item);
    into.itemBytes += item.bytes;
    into.itemBytesByAccount.set(item.accountId, ofAccount + item.bytes);
  }

  private dropped(kind: 'count' | 'item'): null {
    this.metrics?.activityDropped.inc({ kind });
    if (!this.warnedDrop) this.log.warn({ kind }, 'ingest activity dropped: too much waiting to be written');
    this.warnedDrop = true;
    return null;
  }
}
