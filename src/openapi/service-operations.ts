import { responseRef } from './components.js';
import { schemaRef, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/** Health, metrics, this document and the dashboard's pages and files. */

const health = (path: string, operationId: string, summary: string, description: string, unavailable: boolean): OperationDoc => ({
  method: 'get',
  path,
  operationId,
  tag: 'Operations',
  summary,
  description,
  access: 'public',
  usesStore: unavailable,
  responses: { 200: jsonReply('Up.', schemaRef('Health')) },
});

const text = (description: string, type = 'text/plain'): JsonObject => ({ description, content: { [type]: { schema: { type: 'string' } } } });

export const serviceOperations: OperationDoc[] = [
  health('/livez', 'livez', 'Liveness', 'The process is up and its event loop answers: always 200, also while stopping or with the store down.', false),
  health('/readyz', 'readyz', 'Readiness', 'The process accepts requests and can store what it acknowledges: not stopping, the event store (and PostgreSQL) reachable; 503 otherwise.', true),
  health('/healthz', 'healthz', 'Readiness (the name load balancers use)', 'The same as /readyz.', true),
  {
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics',
    description: 'In the Prometheus text format (docs/operations.md). With METRICS_TOKEN set, it needs `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open.',
    access: 'public',
    usesStore: false,
    responses: { 200: text('The metrics.'), 401: responseRef('Unauthorized') },
  },
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openapi',
    tag: 'Operations',
    summary: 'This document',
    description: 'The OpenAPI document of the service, built from the JSON Schemas of `schemas/` by `npm run build`; readable in the dashboard at /dashboard/api.',
    access: 'public',
    usesStore: false,
    responses: {
      200: jsonReply('The OpenAPI 3.1 document.', { type: 'object', required: ['openapi', 'info', 'paths'] }),
      503: text('Not built: run `npm run build`.'),
    },
  },
  {
    method: 'get',
    path: '/',
    operationId: 'root',
    tag: 'Dashboard',
    summary: 'Redirects to the dashboard',
    access: 'public',
    usesStore: false,
    responses: { 302: { description: 'To /dashboard.', headers: { Location: { $ref: '#/components/headers/Location' } } } },
  },
  ...['/dashboard', '/dashboard/*splat'].map(
    (path): OperationDoc => ({
      method: 'get',
      path,
      operationId: path === '/dashboard' ? 'dashboard' : 'dashboard-page',
      tag: 'Dashboard',
      summary: path === '/dashboard' ? 'The dashboard' : 'A page of the dashboard',
      description:
        'The single-page app\'s index.html (never cached), served with a strict Content-Security-Policy, nosniff and no-referrer; it calls the API above. ' +
        'Sign in with a license code and an `ingest+read` token, or the admin token. Not built: 503 with a text saying to run `npm run build`.',
      access: 'public',
      usesStore: false,
      responses: { 200: text('index.html', 'text/html'), 503: text('The dashboard is not built.') },
    }),
  ),
  {
    method: 'get',
    path: '/dashboard/assets/:file',
    operationId: 'dashboard-asset',
    tag: 'Dashboard',
    summary: 'A built file of the dashboard',
    description: 'Scripts, styles and images with a hash of their content in the name, cached for a year.',
    access: 'public',
    usesStore: false,
    responses: { 200: { description: 'The file.' }, 404: responseRef('NotFound') },
  },
];
