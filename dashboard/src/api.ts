/**
 * A typed client of every call of docs/api.md. The session is an HttpOnly cookie the browser sends
 * by itself (credentials 'same-origin'): the dashboard never sees or keeps a token. A reply other
 * than 2xx becomes an ApiError carrying the server's own `error` (or `message`) text; a 401 also
 * tells the app (onUnauthorized), which goes back to the sign-in page.
 */

import type { OpenApiDocument } from './openapi';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

let unauthorized: () => void = () => {};

/** Called on every 401 reply, except that of the sign-in call itself. */
export function onUnauthorized(handler: () => void): void {
  unauthorized = handler;
}

type Query = Record<string, string | number | undefined>;

function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

const segment = encodeURIComponent;

function errorText(status: number, body: unknown): string {
  if (body && typeof body === 'object') {
    const { error, message } = body as { error?: unknown; message?: unknown };
    if (typeof error === 'string') return error;
    if (typeof message === 'string') return message;
  }
  return `the server answered ${status}`;
}

async function call<T>(method: string, path: string, body?: unknown, options: { signIn?: boolean } = {}): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  if (!response.ok) {
    if (response.status === 401 && !options.signIn) unauthorized();
    throw new ApiError(response.status, errorText(response.status, parsed));
  }
  return parsed as T;
}

// ---- sessions ----

export interface AccountRef {
  licenseCode: string;
  name: string;
}

export type Session = { kind: 'account'; account: AccountRef } | { kind: 'operator' };

export type SignIn = { licenseCode: string; accessToken: string } | { adminToken: string };

export const signIn = (credentials: SignIn) => call<Session>('POST', '/admin/v1/session', credentials, { signIn: true });
/** The current session, or null without one (a 401 here is no error). */
export async function currentSession(): Promise<Session | null> {
  try {
    return await call<Session>('GET', '/admin/v1/session', undefined, { signIn: true });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}
export const signOut = () => call<void>('DELETE', '/admin/v1/session');

// ---- accounts (operators) ----

export interface AccountSummary extends AccountRef {
  createdAt: string;
}

export interface NewAccount extends AccountRef {
  accessToken: string;
}

export const listAccounts = () => call<{ accounts: AccountSummary[] }>('GET', '/admin/v1/accounts');
/** Fires `change` when this page created an account, so that lists of accounts load again. */
export const accountsChanged = new EventTarget();

export async function createAccount(name: string): Promise<NewAccount> {
  const created = await call<NewAccount>('POST', '/admin/v1/accounts', { name });
  accountsChanged.dispatchEvent(new Event('change'));
  return created;
}

// ---- access tokens ----

export type TokenScope = 'ingest' | 'ingest+read';

export interface AccessToken {
  id: string;
  label: string;
  scope: TokenScope;
  createdAt: string;
  lastUsedAt: string | null;
}

const accountPath = (license: string) => `/admin/v1/accounts/${segment(license)}`;

export const listTokens = (license: string) => call<{ tokens: AccessToken[] }>('GET', `${accountPath(license)}/tokens`);
export const createToken = (license: string, token: { label: string; scope: TokenScope }) =>
  call<AccessToken & { accessToken: string }>('POST', `${accountPath(license)}/tokens`, token);
export const revokeToken = (license: string, id: string) => call<void>('DELETE', `${accountPath(license)}/tokens/${segment(id)}`);

// ---- leads ----

/**
 * A lead as the read API returns it: the ids, the names, every other system attribute of docs/spec.md 2.2
 * under its own name (`email`, `opt_in_sms`, ...), the custom attributes with their registered types,
 * and the anonymous ids merged into it.
 */
export interface Lead {
  userId: string | null;
  anonymousId: string | null;
  anonymousIds: string[];
  firstName: string | null;
  lastName: string | null;
  attributes: Record<string, unknown>;
  attributeTypes: Record<string, string>;
  mergedInto: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
  [systemAttribute: string]: unknown;
}

export type LeadDetail = Lead;

/** What a list left out of an item: by field, its size as JSON text and its start. */
export type Truncated = Record<string, { bytes: number; excerpt: string }>;

export interface LeadEvent {
  trackID: string | null;
  eventId: string;
  eventName: string;
  eventTime: string | null;
  /** Null when too large for a list (`truncated.eventData`). */
  eventData: Record<string, unknown> | null;
  truncated?: Truncated;
  receivedAt: string;
  [field: string]: unknown;
}

/** A profile sent for the lead (or an anonymous id merged into it), or one of its events; `at` is when it was stored. */
export type TimelineEntry =
  | { kind: 'profile'; at: string; eventId: string; trackID: string; eventType: string; anonymousId?: string; userId?: string }
  | {
      kind: 'event';
      at: string;
      eventId: string;
      trackID: string;
      eventName: string | null;
      /** As sent: a zone-less time is UTC, which a browser would read as its own; show eventTimeUtc. */
      eventTime: string | null;
      /** The instant of eventTime; null until the event's details are applied. */
      eventTimeUtc: string | null;
      eventData: Record<string, unknown> | null;
      truncated?: Truncated;
    };

export interface LeadQuery {
  q?: string;
  kind?: 'known' | 'anonymous';
  /** With `value`: the leads whose custom attribute of this name holds it. */
  attribute?: string;
  value?: string;
  limit?: number;
  cursor?: string;
}

/** The leads of the list's filters, every page: `exact` false when `count` is an estimate. */
export interface LeadTotal {
  count: number;
  exact: boolean;
}

export const listLeads = (license: string, query: LeadQuery = {}) =>
  call<{ leads: Lead[]; nextCursor: string | null; total: LeadTotal }>('GET', withQuery(`${accountPath(license)}/leads`, { ...query }));
export const getLead = (license: string, id: string) => call<LeadDetail>('GET', `${accountPath(license)}/leads/${segment(id)}`);
export const leadEvents = (license: string, id: string, limit?: number, cursor?: string) =>
  call<{ events: LeadEvent[]; nextCursor: string | null }>('GET', withQuery(`${accountPath(license)}/leads/${segment(id)}/events`, { limit, cursor }));
export const leadTimeline = (license: string, id: string, limit?: number, cursor?: string) =>
  call<{ entries: TimelineEntry[]; nextCursor: string | null }>('GET', withQuery(`${accountPath(license)}/leads/${segment(id)}/timeline`, { limit, cursor }));

// ---- track lookup ----

/** A stored event as the track lookup shows it. */
/** Where one copy of a stored event is. */
export interface StoredAt {
  stream: string;
  streamPosition: number;
  globalPosition: number;
  recordedAt: string;
}

export interface StoredEvent {
  eventId: string;
  type: string;
  stream: string;
  streamPosition: number;
  globalPosition: number;
  recordedAt: string;
  /** In a lookup, null when too large for a list (`truncated`); `getStoredEvent` gives it. */
  data: unknown;
  metadata: unknown;
  truncated?: Truncated;
  /** An event id stored more than once: where its later copies are (the event is shown once). */
  alsoStoredAt?: StoredAt[];
  /** A later copy of an event id, in a stream's events: where its first copy is. */
  repeatOf?: StoredAt;
}

export interface TrackLookup {
  trackID: string;
  events: StoredEvent[];
  /** Each stream of the trackID's events, up to and including them. */
  streams: Record<string, StoredEvent[]>;
  /** The cursor of the lookup's next page; null at the end. */
  nextCursor: string | null;
}

export const lookupTrack = (license: string, trackID: string, cursor?: string) =>
  call<TrackLookup>('GET', withQuery(`${accountPath(license)}/track/${segment(trackID)}`, { cursor }));

/** One stored event in full: what a list left out of it. */
export const getStoredEvent = (license: string, eventId: string) => call<StoredEvent>('GET', `${accountPath(license)}/events/${segment(eventId)}`);

// ---- live events ----

export type LiveKind = 'users' | 'events' | 'products' | 'productsevents';

export interface LiveItem {
  trackID: string;
  kind: LiveKind;
  eventType: string;
  name: string | null;
  userId: string | null;
  anonymousId: string | null;
  productId: string | null;
  preview: string | null;
  receivedAt: string;
  stream: string;
  globalPosition: number;
}

export const liveEvents = (license: string, query: { kind?: LiveKind; name?: string; user?: string; limit?: number; after?: string; before?: string } = {}) =>
  call<{ items: LiveItem[]; cursor: string; olderCursor: string | null }>('GET', withQuery(`${accountPath(license)}/live`, { ...query }));

// ---- ingestion warnings ----

export interface WarningExample {
  at: string;
  status: number;
  message: string;
  /** The start of the body the client sent (at most 2 KB); null when there was none. */
  excerpt: string | null;
  truncated: boolean;
}

/** `field`: the item's top-level field it is about; '' for the request or item as a whole. */
export interface WarningGroup {
  reason: string;
  field: string;
  endpoint: string;
  count: number;
  lastSeenAt: string;
  examples: WarningExample[];
}

export interface RecentWarning extends WarningExample {
  endpoint: string;
  reason: string;
  field: string;
}

/** Only the refused items of this reason, field and endpoint (each where given; field '' is the item as a whole). */
export interface WarningFilter {
  reason?: string;
  field?: string;
  endpoint?: string;
}

export const warningGroups = (license: string) => call<{ groups: WarningGroup[] }>('GET', `${accountPath(license)}/warnings`);
export function recentWarnings(license: string, limit: number, cursor: string | undefined, filter: WarningFilter) {
  const path = withQuery(`${accountPath(license)}/warnings/recent`, { limit, cursor, reason: filter.reason, endpoint: filter.endpoint });
  // An empty field is a filter of its own (the item as a whole), which withQuery would leave out.
  const withField = filter.field === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}field=${encodeURIComponent(filter.field)}`;
  return call<{ warnings: RecentWarning[]; nextCursor: string | null }>('GET', withField);
}

// ---- overview ----

export type IngestEndpoint = 'users' | 'users/bulk' | 'events' | 'events/bulk' | 'products' | 'products/bulk' | 'productsevents' | 'productsevents/bulk';

export interface TrafficBucket {
  start: string;
  endpoint: IngestEndpoint;
  accepted: number;
  rejected: number;
}

export interface Overview {
  perMinute: TrafficBucket[];
  perHour: TrafficBucket[];
  /** How far behind this account's own read models are. */
  projections: { lagSeconds: number; lagEvents: number; caughtUp: boolean };
}

export const overview = (license: string) => call<Overview>('GET', `${accountPath(license)}/overview`);

// ---- projections (operators) ----

export interface RebuildStatus {
  state: 'requested' | 'running' | 'finished';
  requestedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  /** Events to replay, counted when it started. */
  target: number | null;
}

export interface ParkedEvent {
  eventId: string;
  eventType: string;
  accountId: string | null;
  globalPosition: number;
  error: string;
  sqlstate: string | null;
  attempts: number;
  parkedAt: string;
}

/** One projection's status, as `tracking projections status --json` prints it. */
export interface ProjectionStatus {
  projection: string;
  eventsApplied: number;
  updatedAt: string | null;
  lagEvents: number;
  lagEventsAtLeast?: true;
  lagSeconds: number;
  accountsBehind: number;
  rebuild: RebuildStatus | null;
  parked: { events: number; latest: ParkedEvent[] };
}

export interface PartStatus {
  part: number;
  owner: { worker: string; workerId: string } | null;
  epoch: number;
  leaseExpiresAt: string | null;
  claimedAt: string | null;
  accountsBehind: number | null;
  reportedAt: string | null;
}

export interface WorkerStatus {
  workerId: string;
  worker: string;
  startedAt: string;
  heartbeatAt: string;
  parts: number[];
}

export interface AccountLag {
  accountId: string;
  projection: string;
  lagEvents: number;
  lagSeconds: number;
  checkpoint: string | null;
}

/** What `tracking projections status --json` prints. */
export interface ProjectionsStatus {
  projections: ProjectionStatus[];
  parts: PartStatus[];
  workers: WorkerStatus[];
  accountsBehind: AccountLag[];
}

export const listProjections = () => call<ProjectionsStatus>('GET', '/admin/v1/projections');
export const rebuildProjection = (name: string) =>
  call<{ projection: string; rebuild: RebuildStatus | null }>('POST', `/admin/v1/projections/${segment(name)}/rebuild`);
/** One account's read models emptied and replayed by the workers; every projection without `projection`. */
export const rebuildAccount = (license: string, projection?: string) =>
  call<{ accountId: string; projections: string[] }>('POST', `${accountPath(license)}/projections/rebuild`, projection ? { projection } : {});
export const retryParked = (name: string) =>
  call<{ projection: string; retried: number; applied: number; stillParked: number }>('POST', `/admin/v1/projections/${segment(name)}/retry`);

// ---- the OpenAPI document (public) ----

/** The service's OpenAPI document: no credentials needed. */
export const openApiDocument = () => call<OpenApiDocument>('GET', '/openapi.json');
