import type { RejectedItem } from './rejected-item.js';

export interface MinuteCount {
  accountId: string;
  minute: number;
  endpoint: string;
  accepted: number;
  rejected: number;
}

export interface HourlyRejections {
  accountId: string;
  hour: number;
  endpoint: string;
  reason: string;
  field: string;
  count: number;
  lastSeen: number;
}

export interface PendingItem extends RejectedItem {
  accountId: string;
  at: number;
  /** Memory it holds, estimated. */
  bytes: number;
}

export interface PendingLimits {
  maxPendingItemBytes: number;
  maxPendingCounts: number;
}

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
/** Memory of a pending item besides its text (two bytes per UTF-16 unit). */
const itemOverheadBytes = 200;

/**
 * What is kept of a refused item: all of it, except the excerpt of a refusal for a suppressed id
 * (reason `suppressed`): that person was erased, and what they send afterwards is not kept
 * (docs/decisions.md, Erasure). Its message names the field, never the id.
 */
function withoutPersonalValues(item: RejectedItem): RejectedItem {
  return item.reason === 'suppressed' && item.excerpt !== null ? { ...item, excerpt: null } : item;
}

/**
 * Ingest activity not written yet: counters per minute and per hour, and rejected items, bounded.
 * Past `maxPendingCounts` counters a new one is dropped; past `maxPendingItemBytes` (one account at
 * most half of it) a rejected item is dropped, though still counted. `dropped` hears of each.
 */
export class PendingActivity {
  readonly minutes = new Map<string, MinuteCount>();
  readonly hours = new Map<string, HourlyRejections>();
  readonly items: PendingItem[] = [];
  itemBytes = 0;
  private readonly itemBytesByAccount = new Map<string, number>();

  constructor(
    private readonly limits: PendingLimits,
    private readonly dropped: (kind: 'count' | 'item') => void,
  ) {}

  get counts(): number {
    return this.minutes.size + this.hours.size;
  }

  get empty(): boolean {
    return this.counts === 0 && this.items.length === 0;
  }

  accepted(accountId: string, endpoint: string, items: number, at: number): void {
    const count = this.minuteCount(accountId, at - (at % minuteMs), endpoint);
    if (count) count.accepted += items;
  }

  rejected(accountId: string, item: RejectedItem, at: number): void {
    const count = this.minuteCount(accountId, at - (at % minuteMs), item.endpoint);
    if (count) count.rejected += 1;
    this.addHourly({ accountId, hour: at - (at % hourMs), endpoint: item.endpoint, reason: item.reason, field: item.field, count: 1, lastSeen: at });
    const kept = withoutPersonalValues(item);
    const bytes = itemOverheadBytes + 2 * (kept.message.length + (kept.excerpt?.text.length ?? 0) + (kept.client?.length ?? 0));
    this.keep({ ...kept, accountId, at, bytes });
  }

  /** Adds what came in after this batch was taken (this one is older, and keeps its place). */
  takeIn(later: PendingActivity): void {
    for (const m of later.minutes.values()) {
      const count = this.minuteCount(m.accountId, m.minute, m.endpoint);
      if (count) {
        count.accepted += m.accepted;
        count.rejected += m.rejected;
      }
    }
    for (const h of later.hours.values()) this.addHourly(h);
    for (const item of later.items) this.keep(item);
  }

  private minuteCount(accountId: string, minute: number, endpoint: string): MinuteCount | null {
    const key = `${accountId} ${minute} ${endpoint}`;
    let count = this.minutes.get(key);
    if (!count) {
      if (this.counts >= this.limits.maxPendingCounts) return this.drop('count');
      count = { accountId, minute, endpoint, accepted: 0, rejected: 0 };
      this.minutes.set(key, count);
    }
    return count;
  }

  private addHourly(add: HourlyRejections): void {
    const key = `${add.accountId} ${add.hour} ${add.endpoint} ${add.reason} ${add.field}`;
    const hourly = this.hours.get(key);
    if (hourly) {
      hourly.count += add.count;
      hourly.lastSeen = Math.max(hourly.lastSeen, add.lastSeen);
    } else if (this.counts >= this.limits.maxPendingCounts) this.drop('count');
    else this.hours.set(key, { ...add });
  }

  private keep(item: PendingItem): void {
    const ofAccount = this.itemBytesByAccount.get(item.accountId) ?? 0;
    const max = this.limits.maxPendingItemBytes;
    if (this.itemBytes + item.bytes > max || ofAccount + item.bytes > max / 2) {
      this.drop('item');
      return;
    }
    this.items.push(item);
    this.itemBytes += item.bytes;
    this.itemBytesByAccount.set(item.accountId, ofAccount + item.bytes);
  }

  private drop(kind: 'count' | 'item'): null {
    this.dropped(kind);
    return null;
  }
}
