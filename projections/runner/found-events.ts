import type { EventStore } from '../../src/eventstore/port.js';
import type { CursorCache } from './cursors.js';

/**
 * How far discovery found each account's events, beside how far this worker's cursors have read
 * them: which projections an account's find leaves behind, and whether a batch that ended found
 * everything discovery had met by then.
 */
export class FoundEvents {
  /** The latest position at which events of each account were found: its cursors are behind until they reach it. */
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly store: Pick<EventStore, 'comparePositions'>,
    private readonly cursors: CursorCache,
    private readonly projections: readonly string[],
  ) {}

  /** Events of the account were found up to `last`: the projections whose cursors have not read that far. */
  found(accountId: string, last: string): string[] {
    const seen = this.seen.get(accountId);
    if (seen === undefined || this.store.comparePositions(last, seen) > 0) this.seen.set(accountId, last);
    return this.projections.filter((projection) => !this.cursorAt(projection, accountId, last));
  }

  upTo(accountId: string): string | undefined {
    return this.seen.get(accountId);
  }

  /** Whether events of the account were found that this worker's cursor of the projection has not read. */
  past(projection: string, accountId: string): boolean {
    const seen = this.seen.get(accountId);
    return seen !== undefined && !this.cursorAt(projection, accountId, seen);
  }

  private cursorAt(projection: string, accountId: string, position: string): boolean {
    const cursor = this.cursors.peek(projection, accountId);
    return cursor !== undefined && this.store.comparePositions(cursor.checkpoint, position) >= 0;
  }
}
