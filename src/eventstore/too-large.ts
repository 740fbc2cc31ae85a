/**
 * An append refused before anything of it was written: the events of one item (one trackID) in
 * one stream, which must be stored in one atomic write, weigh more than one write to the store may
 * hold. The ingest layer answers it 413, naming the item.
 */
export class EventsTooLargeError extends Error {
  constructor(
    /** The trackID of the item whose events do not fit. */
    readonly trackId: string,
    /** What those events weigh, as the store measures a write. */
    readonly bytes: number,
    /** What one write may hold (ESDB_MAX_APPEND_BYTES). */
    readonly maxBytes: number,
  ) {
    super(`the events of ${trackId} take ${bytes} bytes, more than the ${maxBytes} bytes one write to the event store may hold`);
    this.name = 'EventsTooLargeError';
  }
}
