/**
 * The highest position of each stream this process has appended to, as its committed appends
 * returned them, for the most recently written streams. Appending with a known head skips that
 * stream's head lookup in PostgreSQL (append_events, six arguments, in the migrations). Events are
 * never deleted, so a head known here is never above the stored one; if another writer appended
 * meanwhile it is below, the append collides with a stored position, and the caller forgets the
 * batch's heads and appends again with lookups.
 *
 * Two generations of `capacity / 2` streams each: a stream is recorded in the young one, and when
 * that is full the old one is dropped whole and the young one becomes old. So it holds the
 * `capacity / 2` most recently written streams at least and `capacity` at most, at no cost per
 * eviction. A least-recently-written order in one Map, dropping its oldest entry at each record,
 * left V8's map a run of deleted slots at its front that every `keys().next()` walked past: 14 us
 * per record, 15 ms per group commit of 1,000 new streams, a fifth of the service's CPU under
 * users bulk (docs/performance.md, Profiles).
 */
export class StreamHeads {
  private young = new Map<string, number>();
  private old = new Map<string, number>();
  private readonly generation: number;

  constructor(capacity: number) {
    this.generation = Math.max(1, Math.floor(capacity / 2));
  }

  get(stream: string): number | null {
    return this.young.get(stream) ?? this.old.get(stream) ?? null;
  }

  /** Records a committed position; heads only grow, whatever order concurrent appends report in. */
  record(stream: string, position: number): void {
    const known = this.young.get(stream) ?? this.old.get(stream);
    if (known !== undefined && known > position) position = known;
    // A stream of the old generation written again moves to the young one (never in both).
    this.old.delete(stream);
    this.young.set(stream, position);
    if (this.young.size >= this.generation) {
      this.old = this.young;
      this.young = new Map();
    }
  }

  forget(streams: Iterable<string>): void {
    for (const stream of streams) {
      this.young.delete(stream);
      this.old.delete(stream);
    }
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
