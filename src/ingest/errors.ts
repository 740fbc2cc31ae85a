/**
 * What the ingest rules refuse, in their own words: src/http/errors.ts alone turns each into a
 * status and a reply (413, 400, 422), as it does StoreUnavailableError.
 */

/** An item whose events one write of the event store cannot hold: the request stored nothing. */
export class ItemTooLargeError extends Error {
  override readonly name = 'ItemTooLargeError';
}

/** An Idempotency-Key that is empty or too long. */
export class IdempotencyKeyInvalidError extends Error {
  override readonly name = 'IdempotencyKeyInvalidError';
}

/** An Idempotency-Key used with another body within its window. */
export class IdempotencyConflictError extends Error {
  override readonly name = 'IdempotencyConflictError';
}
