import { isUnavailableError } from '../db/errors.js';
import { inTransactionOn } from '../db/transaction.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import * as sql from './sql.js';
import { PendingActivity, type PendingItem } from './pending.js';
import type { RejectedItem } from './rejected-item.js';
import type { Endpoint } from '../ingest/request.js';

export type { RejectedItem } from './rejected-item.js';

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

/** What the recorder uses of a `pg.Pool` (a test gives a failing stand-in). */
export interface ActivityClient {
  query(text: string, values?: unknown[]): Promise<unknown>;
  release(error?: Error | boolean): void;
}
export interface ActivityDatabase {
  connect(): Promise<ActivityClient>;
  query(text: string): Promise<unknown>;
}

/**
 * Remembers what each account's ingest accepted and rejected (docs/api.md, "Ingestion warnings"
 * and "Overview"). Requests only add to counters and a list in memory; a timer writes them once a
 * second in one transaction, so nothing on the request path waits for the database. The memory is
 * bounded: past `maxPendingItemBytes` rejected items are dropped (still counted), past
 * `maxPendingCounts` new counters are dropped. A database that cannot be reached keeps them for the
 * next tick, within those bounds.
 */
export class IngestActivity {
  private pending: PendingActivity;
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
    this.pending = this.newPending();
    this.timer = setInterval(() => void this.flush(), this.settings.flushEveryMs).unref();
  }

  /** Items of `endpoint` stored and answered queued. */
  accepted(accountId: string, endpoint: Endpoint, items = 1, at = Date.now()): void {
    this.pending.accepted(accountId, endpoint, items, at);
  }

  rejected(accountId: string, item: RejectedItem, at = Date.now()): void {
    this.pending.rejected(accountId, item, at);
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
    if (batch.empty) return this.pruneNowAndThen();
    this.pending = this.newPending();
    try {
      await this.writeBatch(batch);
      if (this.failing) this.log.info('ingest activity recorded again');
      this.failing = false;
      this.warnedDrop = false;
    } catch (error) {
      if (isUnavailableError(error) && !this.closed) {
        if (!this.failing) this.log.warn({ err: error }, 'ingest activity not recorded: the database is unavailable; kept in memory (bounded) and retried every second');
        this.failing = true;
        // The batch comes back ahead of what came since, within the same bounds.
        batch.takeIn(this.pending);
        this.pending = batch;
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

  private async writeBatch(batch: PendingActivity): Promise<void> {
    // In one order in every process: two processes adding to the same rows in different orders
    // would deadlock, and the loser would drop its batch.
    const byKey = <T>(keyOf: (row: T) => string) => (a: T, b: T) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0);
    const minutes = [...batch.minutes.values()].sort(byKey((m) => `${m.accountId}\n${m.minute}\n${m.endpoint}`));
    const hours = [...batch.hours.values()].sort(byKey((h) => `${h.accountId}\n${h.hour}\n${h.endpoint}\n${h.reason}\n${h.field}`));
    const items = this.latestPerAccount(batch.items);
    const iso = (ms: number): string => new Date(ms).toISOString();
    const client = await this.db.connect();
    try {
      await inTransactionOn(client, async () => {
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
            hours.map((h) => h.field),
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
            items.map((i) => i.field),
            items.map((i) => i.status),
            items.map((i) => i.message),
            items.map((i) => i.excerpt?.text ?? null),
            items.map((i) => i.excerpt?.truncated ?? false),
            items.map((i) => i.client ?? null),
          ]);
          await client.query(sql.pruneRejectedItems, [[...new Set(items.map((i) => i.accountId))], this.settings.itemsPerAccount]);
        }
      });
      client.release();
    } catch (error) {
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

  private newPending(): PendingActivity {
    return new PendingActivity(this.settings, (kind) => {
      this.metrics?.activityDropped.inc({ kind });
      if (!this.warnedDrop) this.log.warn({ kind }, 'ingest activity dropped: too much waiting to be written');
      this.warnedDrop = true;
    });
  }
}
