/** What one site keeps on a device (docs/browser.md, Delivery): the quota of localStorage is shared with the site's own data. */
export interface QueueLimits {
  maxItems: number;
  /** Characters of JSON: what localStorage counts (UTF-16 code units). */
  maxBytes: number;
  maxAgeMs: number;
}

export const siteLimits: QueueLimits = { maxItems: 500, maxBytes: 1_000_000, maxAgeMs: 7 * 24 * 3600_000 };

/** A unit that is kept or dropped whole: a queued item, or a batch (its key is bound to its body). */
export interface HeldUnit {
  /** When its oldest item was queued (ms since the epoch). */
  t: number;
  /** Items in it. */
  n: number;
  /** Its JSON's length. */
  size: number;
}

/**
 * Which units to drop (their indexes, ascending): those older than maxAgeMs, then the oldest until
 * the rest fit maxItems and maxBytes. The newest unit is always kept, so that a site whose other
 * tabs hold the whole budget still sends what this tab tracks now.
 */
export function unitsToDrop(units: readonly HeldUnit[], limits: QueueLimits, now: number): number[] {
  const drop = new Set<number>();
  let items = 0;
  let bytes = 0;
  units.forEach((unit, index) => {
    if (now - unit.t > limits.maxAgeMs) drop.add(index);
    else {
      items += unit.n;
      bytes += unit.size;
    }
  });
  const byAge = units.map((_, index) => index).filter((index) => !drop.has(index));
  byAge.sort((a, b) => (units[a] as HeldUnit).t - (units[b] as HeldUnit).t || a - b);
  for (const index of byAge.slice(0, -1)) {
    if (items <= limits.maxItems && bytes <= limits.maxBytes) break;
    const unit = units[index] as HeldUnit;
    drop.add(index);
    items -= unit.n;
    bytes -= unit.size;
  }
  return [...drop].sort((a, b) => a - b);
}

/** The limits left to one tab's area when the site's other areas hold `items` and `bytes`. */
export function limitsLeft(limits: QueueLimits, others: { items: number; bytes: number }): QueueLimits {
  return { ...limits, maxItems: limits.maxItems - others.items, maxBytes: limits.maxBytes - others.bytes };
}
