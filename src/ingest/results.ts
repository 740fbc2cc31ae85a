/** What a command answers for each item: queued with its trackID, or rejected with a reason. */
export type ItemResult =
  | { status: 'queued'; trackID: string }
  | { status: 'error'; message: string; reason: RejectReason; field: string };

/** Why an item is rejected: a label for metrics (rejected items by reason). */
export type RejectReason = 'schema' | 'identity' | 'datetime' | 'attribute_type' | 'merge_conflict' | 'merge_limit' | 'suppressed';

/**
 * The field a rejection is about, as Warnings groups them: a top-level field of the item
 * (`eventTime`, `attributes`), `userId/anonymousId` when neither was sent, '' for the item as a
 * whole. Never a custom key or an unknown field's name: those are the client's, and unbounded.
 */
export const rejected = (message: string, reason: RejectReason, field: string): ItemResult => ({ status: 'error', message, reason, field });
