/**
 * The ids of recently committed events, as the server keeps them to recognise a repeated write with
 * expected revision `any` (KurrentDB IndexWriter.cs, `_committedEvents`): a cache bounded in bytes
 * (ESConsts.CommittedEventsMemCacheLimit, 8 MiB), kept by the leader in memory only, so a restart or
 * an election empties it. The oldest ids go first when it is full.
 */
import type { LoggedEvent } from './esdb-protocol.js';

/** The server's bound of the cache. */
export const serverRecentIdBytes = 8 * 1024 * 1024;

/** What the server counts for an entry: the id (16), the event number (4), a pointer (8) and the stream name. */
const entryBytes = (stream: string): number => 16 + 4 + 8 + Buffer.byteLength(stream);

/** The outcome of checking a write's ids against the cache (IndexWriter.CheckCommit, expected revision `any`). */
export type RepeatCheck =
  /** The first id is not remembered (for this stream): the write is stored, again if it was a repeat. */
  | { readonly kind: 'new' }
  /** Every id is remembered for this stream: an idempotent success with the positions of the last one. */
  | { readonly kind: 'repeat'; readonly last: LoggedEvent }
  /** The first id is remembered but a later one not: the server answers WrongExpectedVersion ("corrupted idempotency"). */
  | { readonly kind: 'partial' };

export class RecentIds {
  /** Bytes the cache holds at most; switchable per test (a small bound makes ids drop out early). */
  maxBytes = serverRecentIdBytes;
  private readonly entries = new Map<string, LoggedEvent>();
  private bytes = 0;

  /** Remembers a committed event; the oldest entries go while over the bound. */
  remember(event: LoggedEvent): void {
    this.drop(event.id);
    this.entries.set(event.id, event);
    this.bytes += entryBytes(event.stream);
    for (const id of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(id);
    }
  }

  /** Forgets the given ids, or every id: a restart or a leader election (the new leader starts empty). */
  forget(ids?: readonly string[]): void {
    if (!ids) {
      this.entries.clear();
      this.bytes = 0;
      return;
    }
    for (const id of ids) this.drop(id);
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  check(stream: string, ids: readonly string[]): RepeatCheck {
    let last: LoggedEvent | undefined;
    for (const [i, id] of ids.entries()) {
      const remembered = this.entries.get(id);
      if (!remembered || remembered.stream !== stream) return i === 0 ? { kind: 'new' } : { kind: 'partial' };
      last = remembered;
    }
    return last ? { kind: 'repeat', last } : { kind: 'new' };
  }

  private drop(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.bytes -= entryBytes(entry.stream);
  }
}
