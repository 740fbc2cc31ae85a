import { isEndpoint } from '../ingest/request.js';

/**
 * The route label of a request, for metrics and logs: its route pattern, worked out from the path
 * alone, so that a request gets the same label whether it was answered 200, 401 or 404 (express
 * knows the matched route only when a handler was reached). Never the path itself: it holds the
 * license code. test/route-label.int.spec.ts checks that these are the app's routes.
 */
export const routePatterns: readonly string[] = [
  '/v1/accounts/:license/users',
  '/v1/accounts/:license/users/bulk',
  '/v1/accounts/:license/events',
  '/v1/accounts/:license/events/bulk',
  '/v1/accounts/:license/products',
  '/v1/accounts/:license/products/bulk',
  '/v1/accounts/:license/productsevents',
  '/v1/accounts/:license/productsevents/bulk',
  // Segment's tracking API (docs/segment.md): its calls, their short paths, and the browser settings.
  '/v1/batch',
  '/v1/b',
  '/v1/import',
  '/v1/identify',
  '/v1/i',
  '/v1/track',
  '/v1/t',
  '/v1/page',
  '/v1/p',
  '/v1/screen',
  '/v1/s',
  '/v1/group',
  '/v1/g',
  '/v1/alias',
  '/v1/a',
  '/v1/projects/:writeKey/settings',
  '/admin/v1/session',
  '/admin/v1/accounts',
  '/v1/accounts/:license/erasures',
  '/v1/accounts/:license/erasures/lookup',
  '/v1/accounts/:license/erasures/:id',
  '/admin/v1/accounts/:license/tokens',
  '/admin/v1/accounts/:license/tokens/:id',
  '/admin/v1/accounts/:license/browser-keys',
  '/admin/v1/accounts/:license/browser-keys/:id',
  '/admin/v1/accounts/:license/settings',
  '/admin/v1/accounts/:license/leads',
  '/admin/v1/accounts/:license/leads/:id',
  '/admin/v1/accounts/:license/leads/:id/events',
  '/admin/v1/accounts/:license/leads/:id/timeline',
  '/admin/v1/accounts/:license/products',
  '/admin/v1/accounts/:license/products/:productId',
  '/admin/v1/accounts/:license/products/:productId/events',
  '/admin/v1/accounts/:license/track/:trackID',
  '/admin/v1/accounts/:license/events/:eventId',
  '/admin/v1/accounts/:license/warnings',
  '/admin/v1/accounts/:license/warnings/recent',
  '/admin/v1/accounts/:license/overview',
  '/admin/v1/accounts/:license/live',
  '/admin/v1/accounts/:license/export',
  '/admin/v1/accounts/:license/feed',
  '/admin/v1/accounts/:license/projections/rebuild',
  '/admin/v1/projections',
  '/admin/v1/projections/:name/rebuild',
  '/admin/v1/projections/:name/retry',
  '/healthz',
  '/livez',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/',
  '/dashboard',
  // Before the wildcard, which would take it too.
  '/dashboard/assets/:file',
  '/dashboard/*splat',
  // Before the file, which would take it too.
  '/sdk/manifest.json',
  '/sdk/:file',
  '/sdk/:version/:file',
];

const patterns: readonly { pattern: string; regex: RegExp }[] = routePatterns.map((pattern) => ({
  pattern,
  // `:name` is one path segment, `*name` (express's wildcard) one or more.
  regex: new RegExp(`^${pattern.replace(/:[A-Za-z]+/g, '[^/]+').replace(/\*[A-Za-z]+/g, '.+')}/?$`),
}));

/** Ingest endpoint of a route pattern (`users/bulk`), the label of the ingest item counters. */
export function ingestEndpointOf(route: string): string | null {
  if (route === '/v1/batch' || route === '/v1/b' || route === '/v1/import') return 'segment/batch';
  if (/^\/v1\/[a-z]+$/.test(route)) return 'segment';
  const match = /^\/v1\/accounts\/:license\/(.+)$/.exec(route);
  // The erasure requests share the prefix; they are no ingest endpoint.
  return match && isEndpoint(match[1] as string) ? (match[1] as string) : null;
}

export function routeLabel(path: string): string {
  return patterns.find((p) => p.regex.test(path))?.pattern ?? 'unmatched';
}
