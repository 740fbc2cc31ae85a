interface Cached<V> {
  value: V;
  until: number;
}

/** A map whose entries expire after `ttlMs`, holding at most `max` (the oldest go first). */
export class ExpiringCache<K, V> {
  private readonly entries = new Map<K, Cached<V>>();

  constructor(
    private readonly ttlMs: number,
    private readonly max: number,
  ) {}

  get(key: K, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: K, value: V, now: number, ttlMs = this.ttlMs): void {
    this.entries.delete(key);
    this.entries.set(key, { value, until: now + ttlMs });
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  /** Drops `key`, if it still holds `value` (a later entry stays). */
  delete(key: K, value: V): void {
    if (this.entries.get(key)?.value === value) this.entries.delete(key);
  }
}
