/**
 * The browser SDK (docs/browser.md): `createTracker` for a web page. Built into
 * dist/browser/tracking.mjs (this module) and dist/browser/tracking.js (`window.Tracking`).
 */
import { browserGlobals } from './env.js';
import { createTrackerWith, type Tracker, type TrackerOptions } from './tracker.js';

export type { EventInput, ProductEventInput, ProductInput, ProfileInput, Tracker, TrackerOptions, TrackerStats } from './tracker.js';
export { version } from './version.js';

/** A tracker for this page. */
export function createTracker(options: TrackerOptions): Tracker {
  return createTrackerWith(options, browserGlobals());
}
