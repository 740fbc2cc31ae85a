import { isIPv6 } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import type { Pool } from '../db/pool.js';
import { AppError } from '../errors.js';
import * as sql from './browser-limits-sql.js';

const windowMs = 60_000;
/** Addresses counted at once per process: past it, new addresses are held only by the key's own limit. */
export const maxCountedAddresses = 100_000;

/**
 * The client address a browser's requests are counted by: IPv4 as it is, IPv6 by its /64 (one
 * visitor's device or home network usually holds a whole /64, and may pick any address of it).
 */
export function addressGroup(ip: string): string {
  if (ip.startsWith('::ffff:') && ip.includes('.')) return ip.slice(7);
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '').toLowerCase()).join(':')}::/64`;
}

/**
 * Requests per key and address in one-minute windows, each starting at the address's first request,
 * in memory: a table of at most `maxCountedAddresses` entries, so its memory is bounded in bytes
 * however many addresses a flood comes from (a rate-limiter-flexible memory limiter keeps every key
 * it saw for its whole window, with no bound). A full table drops its ended windows; while it stays
 * full, new addresses are held only by the key's own limit.
 */
export class AddressWindows {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private sweptAt = 0;

  constructor(private readonly perWindow: number) {}

  /** Counts one request; the seconds until the address's window ends when it is past its limit, else null. */
  take(key: string, now = Date.now()): number | null {
    let window = this.windows.get(key);
    if (window && now - window.start >= windowMs) window = undefined;
    if (!window) {
      if (!this.windows.has(key) && this.windows.size >= maxCountedAddresses && !this.sweep(now)) return null;
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count >= this.perWindow) return Math.max(1, Math.ceil((window.start + windowMs - now) / 1000));
    window.count += 1;
    return null;
  }

  /** Drops the ended windows, at most once a second; whether there is room now. */
  private sweep(now: number): boolean {
    if (now - this.sweptAt >= 1000) {
      this.sweptAt = now;
      for (const [key, window] of this.windows) if (now - window.start >= windowMs) this.windows.delete(key);
    }
    return this.windows.size < maxCountedAddresses;
  }
}

/** Counts of each key in this window: what every process had counted at the last sync, and what this one counted since. */
interface KeyCount {
  window: number;
  shared: number;
  local: number;
}

/**
 * Requests per key in fixed one-minute windows, shared by every process through PostgreSQL, with no
 * query on the request path: each process counts in memory and, at most every `syncEveryMs` while it
 * has counted anything, adds its counts to the shared rows in one statement and learns the totals.
 * A key is refused once the total it last learned and its own count since reach the limit, so the
 * processes together overshoot by at most what they take within one sync.
 */
class SharedKeyCounts {
  private readonly counts = new Map<string, KeyCount>();
  private timer: NodeJS.Timeout | null = null;
  private lastWindow = -1;

  constructor(
    private readonly pool: Pool,
    private readonly perWindow: number,
    private readonly syncEveryMs = 250,
  ) {}

  /** Counts one request; the seconds until the window ends when the key is past its limit, else null. */
  take(keyId: string, now = Date.now()): number | null {
    const window = Math.floor(now / windowMs);
    let count = this.counts.get(keyId);
    if (!count || count.window !== window) {
      count = { window, shared: 0, local: 0 };
      this.counts.set(keyId, count);
    }
    if (count.shared + count.local >= this.perWindow) return Math.max(1, Math.ceil(((window + 1) * windowMs - now) / 1000));
    count.local += 1;
    this.timer ??= setTimeout(() => void this.sync(), this.syncEveryMs).unref();
    return null;
  }

  private async sync(): Promise<void> {
    const window = Math.floor(Date.now() / windowMs);
    const sent: [string, KeyCount, number][] = [];
    for (const [keyId, count] of this.counts) {
      if (count.window < window) this.counts.delete(keyId);
      else if (count.local > 0) sent.push([keyId, count, count.local]);
    }
    // In one order in every process: two upserts of the same rows never wait on each other in a circle.
    sent.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    try {
      if (window !== this.lastWindow) {
        // The rows of windows past: one per key and minute, never read again.
        await this.pool.query(sql.forgetPastWindows, [window * windowMs]);
        this.lastWindow = window;
      }
      if (sent.length === 0) return;
      const { rows } = await this.pool.query<{ key: string; points: number }>(sql.addCounts, [
        sent.map(([keyId, count]) => rowKey(keyId, count.window)),
        sent.map(([, , local]) => local),
        (window + 1) * windowMs,
      ]);
      const totals = new Map(rows.map((row) => [row.key, row.points]));
      for (const [keyId, count, local] of sent) {
        count.local -= local;
        count.shared = totals.get(rowKey(keyId, count.window)) ?? count.shared + local;
      }
    } catch {
      // The database is away: the counts wait for the next sync; the key's requests still count here.
    } finally {
      this.timer = null;
      if ([...this.counts.values()].some((count) => count.local > 0)) this.timer = setTimeout(() => void this.sync(), this.syncEveryMs).unref();
    }
  }
}

const rowKey = (keyId: string, window: number): string => `browserkey:${keyId}:${window}`;

function limited(message: string, retryAfterSeconds: number): AppError {
  return new AppError(429, `${message}; retry after ${retryAfterSeconds} s`, 'request', 'rate_limited', { 'Retry-After': String(retryAfterSeconds) });
}

/**
 * The limits of browser keys (docs/browser.md, Limits of browser keys): per client address and
 * key, so that one visitor cannot use up what a key may send; per key across processes (shared
 * through PostgreSQL), so that a copied key cannot use up the account's quota.
 */
export class BrowserKeyLimits {
  private readonly addresses: AddressWindows | null;
  private readonly keys: SharedKeyCounts | null;

  constructor(
    pool: Pool,
    private readonly perAddress: number,
    private readonly perKey: number,
  ) {
    this.addresses = perAddress > 0 ? new AddressWindows(perAddress) : null;
    this.keys = perKey > 0 ? new SharedKeyCounts(pool, perKey) : null;
  }

  /** Refuses (429) the request of `keyId` when its address or the key is over its limit. */
  check(req: Request, keyId: string): void {
    const address = addressGroup(req.ip ?? req.socket.remoteAddress ?? 'unknown');
    const wait = this.addresses?.take(`${keyId} ${address}`);
    if (wait) throw limited(`rate limit of ${this.perAddress} requests per minute from one address exceeded for this browser key`, wait);
    const keyWait = this.keys?.take(keyId);
    if (keyWait) throw limited(`rate limit of ${this.perKey} requests per minute exceeded for this browser key`, keyWait);
  }

  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const keyId = (res.locals.browserKeyId as string | undefined) ?? null;
      if (keyId) this.check(req, keyId);
      next();
    };
  }
}
