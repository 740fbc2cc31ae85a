/**
 * The highest position of each stream this process has appended to, as its committed appends
 * returned them, for the most recently written streams. Appending with a known head skips that
 * stream's head lookup in PostgreSQL (append_events, six arguments, in the migrations). Events are
 * never deleted, so a head known here is never above the stored one; if another writer appended
 * meanwhile it is below, the append collides with a stored position, and the caller forgets the
 * batch's heads and appends again with lookups.
 */
export class StreamHeads {
  /** Map order is least recently written first. */
  private readonly heads = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  get(stream: string): number | null {
    return this.heads.get(stream) ?? null;
  }

  /** Records a committed position; heads only grow, whatever order concurrent appends report in. */
  record(stream: string, position: number): void {
    const known = this.heads.get(stream);
    if (known !== undefined) {
      this.heads.delete(stream);
      if (known > position) position = known;
    }
    this.heads.set(stream, position);
    if (this.heads.size > this.capacity) {
      const oldest = this.heads.keys().next();
      if (!oldest.done) this.heads.delete(oldest.value);
    }
  }

  forget(streams: Iterable<string>): void {
    for (const stream of streams) this.heads.delete(stream);
  }

  get size(): number {
    return this.heads.size;
  }
}
