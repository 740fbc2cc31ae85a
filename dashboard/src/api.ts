/**
 * A typed client of every call of docs/api.md. The session is an HttpOnly cookie the browser sends
 * by itself (credentials 'same-origin'): the dashboard never sees or keeps a token. A reply other
 * than 2xx becomes an ApiError carrying the server's own `error` (or `message`) text; a 401 also
 * tells the app (onUnauthorized), which goes back to the sign-in page.
 */

import type { components, operations } from './api-types';
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

// ---- the reply types ----

// Every type of a request or reply below comes from the OpenAPI document the build writes
// (src/openapi, generated into api-types.ts by dashboard/build.js): a reply shape changed on the
// server fails this type check instead of drifting from it.

type Schemas = components['schemas'];

/** The success reply of a set of replies by status (an operation has one). */
type SuccessOf<R> = R extends { 200: infer S } ? S : R extends { 201: infer S } ? S : R extends { 202: infer S } ? S : R extends { 204: infer S } ? S : never;
/** The JSON body of a reply; void for a reply without one (204). */
type BodyOf<S> = S extends { content: { 'application/json': infer B } } ? B : void;
/** What an operation of the document answers on success, by its operationId. */
type Reply<Id extends keyof operations> = BodyOf<SuccessOf<operations[Id]['responses']>>;
/** The query parameters of an operation, by its operationId. */
type QueryOf<Id extends keyof operations> = NonNullable<operations[Id]['parameters']['query']>;

// ---- sessions ----

export type AccountRef = Schemas['AccountRef'];
export type Session = Schemas['Session'];
export type SignIn = Schemas['SignIn'];

export const signIn = (credentials: SignIn) => call<Reply<'sign-in'>>('POST', '/admin/v1/session', credentials, { signIn: true });
/** The current session, or null without one (a 401 here is no error). */
export async function currentSession(): Promise<Session | null> {
  try {
    return await call<Reply<'get-session'>>('GET', '/admin/v1/session', undefined, { signIn: true });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return null;
    throw error;
  }
}
export const signOut = () => call<Reply<'sign-out'>>('DELETE', '/admin/v1/session');

// ---- accounts (operators) ----

export type AccountSummary = Schemas['Account'];
/** An account just created, with its first access token (shown once). */
export type NewAccount = Schemas['CreatedAccount'];

export const listAccounts = () => call<Reply<'list-accounts'>>('GET', '/admin/v1/accounts');
/** Fires `change` when this page created an account, so that lists of accounts load again. */
export const accountsChanged = new EventTarget();

export async function createAccount(name: string): Promise<NewAccount> {
  const body: Schemas['NewAccount'] = { name };
  const created = await call<Reply<'create-account'>>('POST', '/admin/v1/accounts', body);
  accountsChanged.dispatchEvent(new Event('change'));
  return created;
}

// ---- access tokens ----

export type TokenScope = Schemas['TokenScope'];
export type AccessToken = Schemas['AccessToken'];
/** A token just made: the token itself is shown this once. */
export type CreatedAccessToken = Schemas['CreatedAccessToken'];

const accountPath = (license: string) => `/admin/v1/accounts/${segment(license)}`;

export const listTokens = (license: string) => call<Reply<'list-tokens'>>('GET', `${accountPath(license)}/tokens`);
export const createToken = (license: string, token: Schemas['NewAccessToken']) => call<Reply<'create-token'>>('POST', `${accountPath(license)}/tokens`, token);
export const revokeToken = (license: string, id: string) => call<Reply<'revoke-token'>>('DELETE', `${accountPath(license)}/tokens/${segment(id)}`);

// ---- browser keys (docs/browser.md) ----

/** A browser key as listed: the key itself is never there. */
export type BrowserKey = Schemas['BrowserKey'];
/** A key just made: `browserKey` is shown this once. */
export type CreatedBrowserKey = Schemas['CreatedBrowserKey'];
/** The browser SDK's version and files, each with its `integrity` and sizes. */
export type SdkManifest = Schemas['SdkManifest'];
export type SdkFile = SdkManifest['files'][number];

export const listBrowserKeys = (license: string) => call<Reply<'list-browser-keys'>>('GET', `${accountPath(license)}/browser-keys`);
export const createBrowserKey = (license: string, key: Schemas['NewBrowserKey']) => call<Reply<'create-browser-key'>>('POST', `${accountPath(license)}/browser-keys`, key);
export const changeBrowserKey = (license: string, id: string, change: Schemas['BrowserKeyChange']) =>
  call<Reply<'change-browser-key'>>('PATCH', `${accountPath(license)}/browser-keys/${segment(id)}`, change);
export const revokeBrowserKey = (license: string, id: string) => call<Reply<'revoke-browser-key'>>('DELETE', `${accountPath(license)}/browser-keys/${segment(id)}`);
/** Public, like the SDK files it describes. */
export const sdkManifest = () => call<Reply<'sdk-manifest'>>('GET', '/sdk/manifest.json');

// ---- account settings ----

/** What the account keeps of a visitor's address (a Segment message's context.ip, or the page's own). */
export type AccountSettings = Reply<'get-account-settings'>;
export type AddressPolicy = AccountSettings['addressPolicy'];
type SettingsChange = operations['change-account-settings']['requestBody']['content']['application/json'];

export const accountSettings = (license: string) => call<Reply<'get-account-settings'>>('GET', `${accountPath(license)}/settings`);
export const changeAccountSettings = (license: string, change: SettingsChange) => call<Reply<'change-account-settings'>>('PATCH', `${accountPath(license)}/settings`, change);

// ---- leads ----

/**
 * A lead as `GET .../leads/{id}` returns it: the ids, the names, every other system attribute of
 * docs/spec.md 2.2 under its own name (`email`, `opt_in_sms`, ...), the custom attributes with their
 * registered types, and the anonymous ids merged into it.
 */
export type Lead = Schemas['Lead'];
/** A lead as the list shows it: the merged ids and custom attributes null when too large for a list. */
export type ListedLead = Schemas['ListedLead'];

/** What a list left out of an item: by field, its size as JSON text and its start. */
export type Truncated = Schemas['Truncated'];

export type LeadEvent = Reply<'list-lead-events'>['events'][number];

/** A profile sent for the lead (or an anonymous id merged into it), or one of its events; `at` is when it was stored. */
export type TimelineEntry = Schemas['TimelineEntry'];

export type LeadQuery = QueryOf<'list-leads'>;
/** A page of the leads list, with the cursor of the next and the total of its filters. */
export type LeadPage = Reply<'list-leads'>;

/** The leads of the list's filters, every page: `exact` false when `count` is an estimate. */
export type LeadTotal = Schemas['LeadPage']['total'];

export const listLeads = (license: string, query: LeadQuery = {}) => call<Reply<'list-leads'>>('GET', withQuery(`${accountPath(license)}/leads`, { ...query }));
export const getLead = (license: string, id: string) => call<Reply<'get-lead'>>('GET', `${accountPath(license)}/leads/${segment(id)}`);
export const leadEvents = (license: string, id: string, limit?: number, cursor?: string) =>
  call<Reply<'list-lead-events'>>('GET', withQuery(`${accountPath(license)}/leads/${segment(id)}/events`, { limit, cursor }));
export const leadTimeline = (license: string, id: string, limit?: number, cursor?: string) =>
  call<Reply<'get-lead-timeline'>>('GET', withQuery(`${accountPath(license)}/leads/${segment(id)}/timeline`, { limit, cursor }));

// ---- products ----

/** A product as `GET .../products/{productId}` returns it: its latest properties in full, and who sent them. */
export type Product = Schemas['Product'];
/** A product as the list shows it: its properties null when too large for a list (`truncated`). */
export type ListedProduct = Schemas['ListedProduct'];
export type ProductEvent = Reply<'list-product-events'>['events'][number];
export type ProductQuery = QueryOf<'list-products'>;
/** A page of the products list, with the cursor of the next. */
export type ProductList = Reply<'list-products'>;

export const listProducts = (license: string, query: ProductQuery = {}) => call<Reply<'list-products'>>('GET', withQuery(`${accountPath(license)}/products`, { ...query }));
export const getProduct = (license: string, productId: string) => call<Reply<'get-product'>>('GET', `${accountPath(license)}/products/${segment(productId)}`);
export const productEvents = (license: string, productId: string, limit?: number, cursor?: string) =>
  call<Reply<'list-product-events'>>('GET', withQuery(`${accountPath(license)}/products/${segment(productId)}/events`, { limit, cursor }));

// ---- track lookup ----

/** Where one copy of a stored event is. */
export type StoredAt = Schemas['StoredAt'];
/** A stored event in full, as `getStoredEvent` gives it. */
export type StoredEvent = Schemas['StoredEvent'];
/** A stored event as a lookup lists it: `data` or `metadata` null when too large for a list (`truncated`). */
export type ListedStoredEvent = Schemas['ListedStoredEvent'];
export type TrackLookup = Schemas['TrackLookup'];

export const lookupTrack = (license: string, trackID: string, cursor?: string) =>
  call<Reply<'look-up-track-id'>>('GET', withQuery(`${accountPath(license)}/track/${segment(trackID)}`, { cursor }));

/** One stored event in full: what a list left out of it. */
export const getStoredEvent = (license: string, eventId: string) => call<Reply<'get-stored-event'>>('GET', `${accountPath(license)}/events/${segment(eventId)}`);

// ---- live events ----

export type LiveItem = Schemas['LivePage']['items'][number];
export type LiveKind = LiveItem['kind'];

export const liveEvents = (license: string, query: QueryOf<'list-live-events'> = {}) =>
  call<Reply<'list-live-events'>>('GET', withQuery(`${accountPath(license)}/live`, { ...query }));

// ---- ingestion warnings ----

/** `field`: the item's top-level field it is about; '' for the request or item as a whole. */
export type WarningGroup = Schemas['WarningGroups']['groups'][number];
export type WarningExample = WarningGroup['examples'][number];
export type RecentWarning = Schemas['RecentWarnings']['warnings'][number];

/** Only the refused items of this reason, field and endpoint (each where given; field '' is the item as a whole). */
export interface WarningFilter {
  reason?: string;
  field?: string;
  endpoint?: string;
}

export const warningGroups = (license: string) => call<Reply<'get-warning-groups'>>('GET', `${accountPath(license)}/warnings`);
export function recentWarnings(license: string, limit: number, cursor: string | undefined, filter: WarningFilter) {
  const path = withQuery(`${accountPath(license)}/warnings/recent`, { limit, cursor, reason: filter.reason, endpoint: filter.endpoint });
  // An empty field is a filter of its own (the item as a whole), which withQuery would leave out.
  const withField = filter.field === undefined ? path : `${path}${path.includes('?') ? '&' : '?'}field=${encodeURIComponent(filter.field)}`;
  return call<Reply<'list-recent-warnings'>>('GET', withField);
}

// ---- overview ----

export type Overview = Schemas['Overview'];
export type TrafficBucket = Overview['perMinute'][number];
export type IngestEndpoint = TrafficBucket['endpoint'];

export const overview = (license: string) => call<Reply<'get-overview'>>('GET', `${accountPath(license)}/overview`);

// ---- projections (operators) ----

/** What `tracking projections status --json` prints. */
export type ProjectionsStatus = Schemas['ProjectionStatusList'];
/** One projection's status. */
export type ProjectionStatus = Schemas['ProjectionStatus'];
export type RebuildStatus = Schemas['RebuildStatus'];
export type ParkedEvent = ProjectionStatus['parked']['latest'][number];
export type PartStatus = ProjectionsStatus['parts'][number];
export type WorkerStatus = ProjectionsStatus['workers'][number];
export type AccountLag = ProjectionsStatus['accountsBehind'][number];

export const listProjections = () => call<Reply<'list-projections'>>('GET', '/admin/v1/projections');
export const rebuildProjection = (name: string) => call<Reply<'rebuild-projection'>>('POST', `/admin/v1/projections/${segment(name)}/rebuild`);
/** One account's read models emptied and replayed by the workers; every projection without `projection`. */
export const rebuildAccount = (license: string, projection?: string) =>
  call<Reply<'rebuild-account'>>('POST', `${accountPath(license)}/projections/rebuild`, projection ? { projection } : {});
export const retryParked = (name: string) => call<Reply<'retry-projection'>>('POST', `/admin/v1/projections/${segment(name)}/retry`);

// ---- erasure of a person ----

/** An erasure request and its state: `counts` once done, `error` once failed. */
export type Erasure = Schemas['Erasure'];
export type ErasureCounts = NonNullable<Erasure['counts']>;
/**
 * Who to erase: a userId, an anonymousId or both. Written out here: the document's NewErasure
 * requires one of the two (anyOf), which openapi-typescript turns into `unknown`.
 */
export type NewErasure = ({ userId: string; anonymousId?: string } | { userId?: string; anonymousId: string }) & { suppress?: Erasure['suppress'] };

// Under the account's API (/v1), not /admin/v1: the same calls a client's ingest+read token makes.
const erasuresPath = (license: string) => `/v1/accounts/${segment(license)}/erasures`;

export const requestErasure = (license: string, erasure: NewErasure) => call<Reply<'request-erasure'>>('POST', erasuresPath(license), erasure);
export const listErasures = (license: string, query: QueryOf<'list-erasures'> = {}) =>
  call<Reply<'list-erasures'>>('GET', withQuery(erasuresPath(license), { ...query }));
export const getErasure = (license: string, id: string) => call<Reply<'get-erasure'>>('GET', `${erasuresPath(license)}/${segment(id)}`);

// ---- the OpenAPI document (public) ----

/** The service's OpenAPI document: no credentials needed. */
export const openApiDocument = () => call<OpenApiDocument>('GET', '/openapi.json');
