export { TrackingClient } from './client.js';
export type { TrackingClientOptions } from './options.js';
export {
  BatchFailedError,
  InvalidItemError,
  ItemRejectedError,
  QueueFullError,
  TrackingClosedError,
  TrackingError,
  UndeliveredAtExitError,
} from './errors.js';
export { parseRetryAfter, RetryPolicy, type BackoffTiming } from './retry.js';
export type { AttributeValue, BatchInfo, ClientStats, DateTime, ItemKind, ItemResult, Product, ProductEvent, TrackedEvent, UserProfile } from './types.js';
export { sdkVersion } from './version.js';
