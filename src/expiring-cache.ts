import { LRUCache } from 'lru-cache';

/**
 * A map whose entries expire after `ttlMs`, holding at most `max` (the least recently used go
 * first): lru-cache, whose eviction is O(1). (A Map evicted from its front walks over the holes its
 * deletions left until it is rehashed: at capacity, each insertion cost thousands of steps.)
 */
export class ExpiringCache<K extends NonNullable<unknown>, V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<K, V>;

  constructor(ttlMs: number, max: number) {
    this.entries = new LRUCache<K, V>({ max, ttl: ttlMs, updateAgeOnGet: false });
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V, ttlMs?: number): void {
    this.entries.set(key, value, ttlMs === undefined ? undefined : { ttl: ttlMs });
  }

  /** Drops `key`, if it still holds `value` (a later entry stays). */
  delete(key: K, value: V): void {
    if (this.entries.peek(key) === value) this.entries.delete(key);
  }
}
