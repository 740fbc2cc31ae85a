/** The browser SDK's parts, for its unit tests (`@tracking-ingestion/sdk/browser/internals`): not a public API. */
export { areaKeys, readArea, StorageArea, usageOf, type AreaData } from './area.js';
export { firstRetryMs, maxRetryMs, retryDelayMs } from './backoff.js';
export { cutBatches, fitsOneBatch, shapeProblem, maxBatchBytes, maxBatchItems, utf8Length, type QueuedItem, type StoredBatch } from './batches.js';
export { limitsLeft, siteLimits, unitsToDrop, type HeldUnit, type QueueLimits } from './bounds.js';
export { campaignOf, deviceType } from './context.js';
export { cookieBudgetBytes, CookieJar, domainCandidates, fitsCookieBudget, readCookie } from './cookies.js';
export { cutAfterMs, Delivery, scanEveryMs, type DeliveryEnv, type DeliveryStats } from './delivery.js';
export type { BrowserGlobals, FetchLike, LocksLike, ReplyLike, StorageLike } from './env.js';
export { uuidOf } from './env.js';
export { anonymousIdName, Identity, optOutName, userIdName } from './identity.js';
export { errorText, resultsOf, retriable } from './replies.js';
export { createTrackerWith, type Tracker, type TrackerOptions } from './tracker.js';
export { version } from './version.js';
