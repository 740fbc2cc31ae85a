import type { ItemKind } from './types.js';

/** Every error the client raises or reports to `onError`. */
export class TrackingError extends Error {
  override name = 'TrackingError';
}

/** The promise of a call made while the queue held `maxQueueSize` items or `maxQueueBytes` bytes: the item was not queued. */
export class QueueFullError extends TrackingError {
  override name = 'QueueFullError';
}

/** The promise of a call made after `close()`: the item was not queued. */
export class TrackingClosedError extends TrackingError {
  override name = 'TrackingClosedError';
  constructor() {
    super('the tracking client is closed (close() was called): the item was not queued');
  }
}

/** An item that cannot be sent at all: not JSON-serialisable, nested too deep, or larger than any bulk body. */
export class InvalidItemError extends TrackingError {
  override name = 'InvalidItemError';
  constructor(
    readonly kind: ItemKind,
    message: string,
  ) {
    super(message);
  }
}

/** An item the service refused (an error element of a bulk reply): reported to `onError`, never retried. */
export class ItemRejectedError extends TrackingError {
  override name = 'ItemRejectedError';
  constructor(
    readonly kind: ItemKind,
    message: string,
  ) {
    super(message);
  }
}

/** A batch that failed for good: refused whole (a 4xx other than 408 and 429), or not delivered within `retryForMs`. */
export class BatchFailedError extends TrackingError {
  override name = 'BatchFailedError';
  constructor(
    readonly kind: ItemKind,
    readonly itemCount: number,
    /** The status of the last reply; null when the last attempt got none (network error, timeout). */
    readonly status: number | null,
    readonly attempts: number,
    message: string,
  ) {
    super(message);
  }
}

/** Items still held when the process exits without `await client.close()` (process.exit(), a signal). */
export class UndeliveredAtExitError extends TrackingError {
  override name = 'UndeliveredAtExitError';
}
