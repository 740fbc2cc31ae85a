/**
 * The EventStoreDB test double's log: `$all` in memory, its streams, and the server's commit check of
 * a write (expected revision, then the recognition of a repeated write).
 */
import { randomUUID } from 'node:crypto';
import { comparePosition, isSystemStream, type Expected, type LoggedEvent, type Position, type Proposed } from './esdb-protocol.js';
import { RecentIds } from './esdb-recent-ids.js';

const TICKS_PER_MS = 10_000n;

export type WriteOutcome =
  /** `position`: that of the write's last event (null when it wrote none); `revision`: the stream's last. */
  | { readonly ok: true; readonly revision: number | null; readonly position: bigint | null }
  | { readonly ok: false; readonly current: number | null };

export class EventLog {
  /**
   * true (default): repeated writes are recognised as the server does: with expected revision `any`
   * through the recent-id cache (`recentIds`), with an exact revision or `no_stream` at that place
   * in the stream. false: ids are not checked, every write is stored.
   */
  deduplicate = true;
  readonly recentIds = new RecentIds();
  readonly events: LoggedEvent[] = [];
  private readonly streams = new Map<string, LoggedEvent[]>();
  private nextPosition = 0n;

  constructor(private readonly onWrite: () => void) {
    // Some system events, as a fresh real node writes, so that filters have something to filter out.
    const system = (stream: string, type: string, data: object): void => {
      this.write(stream, [{ id: randomUUID(), type, isJson: true, data: Buffer.from(JSON.stringify(data)), customMetadata: new Uint8Array() }]);
    };
    system('$epochs', '$epoch-information', { epochNumber: 0, epochPosition: 0 });
    system('$$$stats-test', '$metadata', { $maxAge: 86400 });
    system('$stats-test', '$statsCollected', { 'proc-startTime': new Date().toISOString() });
  }

  /** Number of events in the log (user events only). */
  get size(): number {
    return this.events.filter((event) => !isSystemStream(event.stream)).length;
  }

  stream(name: string): readonly LoggedEvent[] | undefined {
    return this.streams.get(name);
  }

  /** The server's commit check (IndexWriter.CheckCommit), then the write. */
  write(stream: string, events: readonly Proposed[], expected: Expected = 'any'): WriteOutcome {
    const existing = this.streams.get(stream) ?? [];
    const current = existing.length === 0 ? null : existing.length - 1;
    if (expected === 'stream_exists' && current === null) return { ok: false, current };
    if (this.deduplicate && events.length > 0) {
      if (expected === 'any' || expected === 'stream_exists') {
        const check = this.recentIds.check(stream, events.map((event) => event.id));
        if (check.kind === 'repeat') return { ok: true, revision: check.last.revision, position: check.last.prepare };
        if (check.kind === 'partial') return { ok: false, current };
      } else {
        const repeat = findRepeat(existing, events, expected);
        if (repeat) return { ok: true, revision: repeat.revision, position: repeat.prepare };
      }
    }
    const wrong =
      (expected === 'no_stream' && current !== null) || (typeof expected === 'bigint' && BigInt(current ?? -1) !== expected);
    if (wrong) return { ok: false, current };
    if (events.length === 0) return { ok: true, revision: current, position: null };

    // Each event is a record of its own in the log, and reads back with commit = prepare = its own position.
    const created = BigInt(Date.now()) * TICKS_PER_MS;
    let position = this.nextPosition;
    for (const event of events) {
      position = this.nextPosition;
      const logged: LoggedEvent = { ...event, stream, revision: existing.length, created, commit: position, prepare: position };
      this.nextPosition += BigInt(
        96 + Buffer.byteLength(stream) + Buffer.byteLength(event.type) + event.data.length + event.customMetadata.length,
      );
      existing.push(logged);
      this.events.push(logged);
      this.recentIds.remember(logged);
    }
    this.streams.set(stream, existing);
    this.onWrite();
    return { ok: true, revision: existing.length - 1, position };
  }

  /** `$all` in read order: forwards from P includes the event at P, backwards from P gives the events before P. */
  readAll(from: Position | 'start' | 'end', backwards: boolean): LoggedEvent[] {
    if (from === 'start') return backwards ? [] : [...this.events];
    if (from === 'end') return backwards ? [...this.events].reverse() : [];
    return backwards
      ? this.events.filter((e) => comparePosition(e, from) < 0).reverse()
      : this.events.filter((e) => comparePosition(e, from) >= 0);
  }

  /** The index in `$all` of the first event after `from`: where a subscription from there starts. */
  indexAfter(from: Position | 'start' | 'end'): number {
    if (from === 'start') return 0;
    if (from === 'end') return this.events.length;
    return this.events.filter((e) => comparePosition(e, from) <= 0).length;
  }
}

/**
 * The last event of an earlier identical write at the place an exact expected revision (or
 * `no_stream`) puts it: the server finds those through its index as well as its cache.
 */
function findRepeat(existing: readonly LoggedEvent[], events: readonly Proposed[], expected: Expected): LoggedEvent | undefined {
  const start = typeof expected === 'bigint' ? Number(expected) + 1 : expected === 'no_stream' ? 0 : -1;
  const matches = start >= 0 && start + events.length <= existing.length && events.every((e, i) => existing[start + i]?.id === e.id);
  return matches ? existing[start + events.length - 1] : undefined;
}
