/** What a command answers for each item: queued with its trackID, or rejected with a reason. */
export type ItemResult =
  | { status: 'queued'; trackID: string }
  | { status: 'error'; message: string; reason: RejectReason };

/** Why an item is rejected: a label for metrics (rejected items by reason). */
export type RejectReason = 'schema' | 'identity' | 'datetime' | 'attribute_type' | 'merge_conflict' | 'merge_limit';

export const rejected = (message: string, reason: RejectReason): ItemResult => ({ status: 'error', message, reason });
