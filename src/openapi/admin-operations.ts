import { liveKinds } from '../../projections/track-index/live.js';
import { limitParameter, responseRef, retryAfter, serverTiming, setCookie } from './components.js';
import { schemaRef, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/** Sessions, accounts, access tokens, the read API and the projections (docs/api.md), under /admin/v1. */

const query = (name: string, description: string, schema: JsonObject = { type: 'string' }): JsonObject => ({ name, in: 'query', required: false, description, schema });
const accounts = '/admin/v1/accounts/:license';
const noContent = (description: string, headers?: JsonObject): JsonObject => (headers ? { description, headers } : { description });

const read = (path: string, operationId: string, summary: string, description: string, schema: string, more: Partial<OperationDoc> = {}): OperationDoc => ({
  method: 'get',
  path: `${accounts}/${path}`,
  operationId,
  tag: 'Read API',
  summary,
  description,
  access: 'account',
  usesStore: true,
  responses: { 200: jsonReply(summary, schemaRef(schema), serverTiming) },
  ...more,
});

/** The 429 of an address that has presented too many wrong admin tokens (docs/decisions.md, Sessions and credentials). */
export const wrongAdminTokens: JsonObject = {
  description:
    'Too many wrong admin tokens from this address: 20 within 10 minutes, at operator sign-in and in the `Authorization` header of any call that takes the admin token, counted together. ' +
    'Refused even with the right admin token until the window ends; access tokens and sessions are not affected.',
  headers: retryAfter,
  content: { 'application/json': { schema: schemaRef('ErrorReply') } },
};

/**
 * What every call that takes the admin token can also answer: 429 (above), and 400 for a path
 * parameter holding a NUL character (the license code is looked up as any unknown one: 401 or 404).
 */
export const takingAdminToken = (operations: OperationDoc[]): OperationDoc[] =>
  operations.map((operation) => ({
    ...operation,
    responses: { ...(/[:*](?!license\b)\w+/.test(operation.path) ? { 400: responseRef('BadRequest') } : {}), 429: wrongAdminTokens, ...operation.responses },
  }));

export const sessionOperations: OperationDoc[] = [
  {
    method: 'post',
    path: '/admin/v1/session',
    operationId: 'sign-in',
    tag: 'Sessions',
    summary: 'Sign in (the dashboard)',
    description:
      'With a license code and an access token of scope `ingest+read`, or with the admin token; sets the session cookie and ends the session the browser held. ' +
      'Must not come with an `Origin` naming another host (403). A client address that presented 20 wrong admin tokens within 10 minutes (here or in an `Authorization` header) gets 429 at operator sign-in until its window ends.',
    access: 'public',
    usesStore: true,
    body: { schema: schemaRef('SignIn'), description: 'JSON of at most 4 KB.' },
    responses: {
      200: jsonReply('Signed in; the cookie is set.', schemaRef('Session'), setCookie),
      401: responseRef('Unauthorized'),
      403: responseRef('Forbidden'),
      429: wrongAdminTokens,
    },
  },
  {
    method: 'get',
    path: '/admin/v1/session',
    operationId: 'get-session',
    tag: 'Sessions',
    summary: 'The current session',
    access: 'public',
    security: [{ session: [] }],
    usesStore: true,
    responses: { 200: jsonReply('The session of the cookie.', schemaRef('Session')), 401: responseRef('Unauthorized') },
  },
  {
    method: 'delete',
    path: '/admin/v1/session',
    operationId: 'sign-out',
    tag: 'Sessions',
    summary: 'Sign out',
    description: 'Ends the session and clears the cookie (204 too without a session).',
    access: 'public',
    security: [{ session: [] }, {}],
    usesStore: true,
    responses: { 204: noContent('Signed out; the cookie is cleared.', setCookie), 403: responseRef('Forbidden') },
  },
];

export const accountOperations: OperationDoc[] = takingAdminToken([
  {
    method: 'get',
    path: '/admin/v1/accounts',
    operationId: 'list-accounts',
    tag: 'Accounts',
    summary: 'Every account',
    access: 'operator',
    usesStore: true,
    responses: { 200: jsonReply('The accounts, oldest first.', schemaRef('AccountList')) },
  },
  {
    method: 'post',
    path: '/admin/v1/accounts',
    operationId: 'create-account',
    tag: 'Accounts',
    summary: 'Create an account',
    description:
      'Its license code and first access token (scope `ingest+read`, label `initial`) are in the reply, shown once. ' +
      'A name is 1 to 200 characters once trimmed, without control characters or unpaired surrogates (400 naming `name`).',
    access: 'operator',
    usesStore: true,
    body: { schema: schemaRef('NewAccount'), description: 'JSON of at most 64 KB.', examples: { acme: { summary: 'An account', value: { name: 'Acme' } } } },
    responses: { 201: jsonReply('Created.', schemaRef('CreatedAccount')) },
  },
  {
    method: 'get',
    path: `${accounts}/tokens`,
    operationId: 'list-tokens',
    tag: 'Access tokens',
    summary: "The account's active access tokens",
    access: 'account',
    usesStore: true,
    responses: { 200: jsonReply('Oldest first; never the tokens themselves.', schemaRef('AccessTokenList')) },
  },
  {
    method: 'post',
    path: `${accounts}/tokens`,
    operationId: 'create-token',
    tag: 'Access tokens',
    summary: 'Make an access token',
    description: 'An account holds up to 20 active tokens (409 past that).',
    access: 'account',
    usesStore: true,
    body: {
      schema: schemaRef('NewAccessToken'),
      description: 'JSON of at most 4 KB.',
      examples: { shop: { summary: 'A token that only posts items', value: { label: 'web shop', scope: 'ingest' } } },
    },
    responses: { 201: jsonReply('Made; the token is shown this once.', schemaRef('CreatedAccessToken')), 409: responseRef('Conflict') },
  },
  {
    method: 'delete',
    path: `${accounts}/tokens/:id`,
    operationId: 'revoke-token',
    tag: 'Access tokens',
    summary: 'Revoke an access token',
    description: 'Refused at once in this process, within 30 seconds in the others. The last active token cannot go (409); unknown, revoked or another account\'s: 404.',
    access: 'account',
    usesStore: true,
    responses: { 204: noContent('Revoked.'), 409: responseRef('Conflict') },
  },
]);

const cursorParameter = query('cursor', 'The `nextCursor` of an earlier page.');
const byBytes = 'A page ends at `limit` or before the item that would take it past 1 MiB of JSON, with a `nextCursor`; payloads over 4 KiB of JSON text are left out (`truncated`), `GET .../events/{eventId}` gives them.';

export const readOperations: OperationDoc[] = takingAdminToken([
  read('leads', 'list-leads', 'Leads, newest first', 'A page of leads, with the cursor of the next; at most 1 MiB of JSON, `anonymousIds`, `attributes` and `attributeTypes` left out when over 4 KiB (`truncated`: `GET .../leads/{id}` gives them). A `q` of 1 or 2 characters walks at most 50,000 leads a request: its page may be short, even empty, with a `nextCursor` to go on. `total` counts the leads of the filters, every page: exactly up to 10,000 when counting takes under 50 ms, else PostgreSQL\'s estimate (`exact: false`).', 'LeadPage', {
    parameters: [
      query('q', 'Finds ids, email and names (case-insensitive, anywhere in the text); at most 200 characters.', { type: 'string', maxLength: 200 }),
      query('kind', '`known` (has a userId) or `anonymous`.', { enum: ['known', 'anonymous'] }),
      query('attribute', 'With `value`: only the leads whose custom attribute of this name holds the value.', { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 100 }),
      query('value', 'With `attribute`: the value, as text. `12` finds the number 12 and the text "12", `true` the boolean and the text, a date-time the instant it names (in any form that names it).', { type: 'string', maxLength: 1000 }),
      limitParameter(500, 50),
      cursorParameter,
    ],
  }),
  read('leads/:id', 'get-lead', 'One lead', 'By userId or anonymousId; a merged anonymousId gives its known user.', 'Lead'),
  read('leads/:id/events', 'list-lead-events', "A lead's events, latest first", `Also those of anonymous profiles merged into it. ${byBytes}`, 'LeadEvents', {
    parameters: [limitParameter(500, 50), cursorParameter],
  }),
  read('leads/:id/timeline', 'get-lead-timeline', "A lead's timeline, latest first", `Profiles sent for it (and for anonymous ids merged into it) and its events, as the track index has them. An entry of an erased person (an anonymous id merged into it and erased alone) stays, with \`erasedBy\` and nothing the person sent. ${byBytes}`, 'Timeline', {
    parameters: [limitParameter(500, 100), cursorParameter],
  }),
  read(
    'track/:trackID',
    'look-up-track-id',
    'The stored events of a trackID',
    `Type, stream, positions, data and metadata of each, and their streams up to them (as \`tracking audit --json\`, which prints every payload in full). ${byBytes} Unknown, another account's, or not a UUID: 404.`,
    'TrackLookup',
    { parameters: [cursorParameter] },
  ),
  read('events/:eventId', 'get-stored-event', 'One stored event in full', "What a list left out (`truncated`): its data and metadata as stored (at most about 1 MiB, as ingest bounds an item). Unknown, another account's, not yet indexed (about a second), or not a UUID: 404.", 'StoredEvent'),
  read('live', 'list-live-events', "The account's latest stored items", 'Newest first; poll with the `cursor` of the previous reply as `after`.', 'LivePage', {
    parameters: [
      query('kind', 'Only items of this endpoint (empty: all).', { enum: [...liveKinds, ''] }),
      query('name', "Only events and product events of this exact eventName (empty: all)."),
      query('user', 'Only items of the person with this exact userId or anonymousId (empty: everyone).'),
      limitParameter(200, 50),
      query('after', 'A `cursor` of an earlier reply: only items indexed since.'),
      query('before', 'An `olderCursor` of an earlier reply: only items indexed before those.'),
    ],
  }),
  read('warnings', 'get-warning-groups', 'Refused items by reason', 'Counts over 30 days by reason, field and endpoint, with the latest 3 examples of each group.', 'WarningGroups'),
  read('warnings/recent', 'list-recent-warnings', 'The latest refused items', `Newest first, with the message the client got and a body excerpt. ${byBytes}`, 'RecentWarnings', {
    parameters: [
      limitParameter(1000, 100),
      cursorParameter,
      query('reason', 'Only items refused for this reason (empty: any).'),
      query('field', 'Only items refused over this field; given empty, only those refused as a whole.'),
      query('endpoint', 'Only items sent to this endpoint (empty: any).'),
    ],
  }),
  read('overview', 'get-overview', 'Accepted and rejected items per endpoint', 'Per minute over the last hour and per hour over 7 days, and how far behind the projections are.', 'Overview'),
]);

const projection = (action: 'rebuild' | 'retry', summary: string, description: string, success: JsonObject): OperationDoc => ({
  method: 'post',
  path: `/admin/v1/projections/:name/${action}`,
  operationId: `${action}-projection`,
  tag: 'Projections',
  summary,
  description,
  access: 'operator',
  usesStore: true,
  responses: { ...success, 404: responseRef('NotFound'), 409: responseRef('Conflict') },
});

export const projectionOperations: OperationDoc[] = takingAdminToken([
  {
    method: 'get',
    path: '/admin/v1/projections',
    operationId: 'list-projections',
    tag: 'Projections',
    summary: "The projections' status",
    description: 'Per projection: events applied, lag, accounts behind, parked events and rebuild; the parts and their owners, the workers alive, and the accounts furthest behind.',
    access: 'operator',
    usesStore: true,
    responses: { 200: jsonReply('As `tracking projections status --json`.', schemaRef('ProjectionStatusList')) },
  },
  projection(
    'rebuild',
    'Ask for a rebuild',
    'A worker empties the read models and the workers replay the store, each the accounts of its parts; follow it in the status. While one is requested or running: 409.',
    { 202: jsonReply('Asked for: `rebuild.state` is `requested`.', schemaRef('RebuildRequested')) },
  ),
  {
    method: 'post',
    path: `${accounts}/projections/rebuild`,
    operationId: 'rebuild-account',
    tag: 'Projections',
    summary: "Rebuild one account's read models",
    description:
      "The account's rows, cursors and parked events of the projections named go in one transaction, and the workers replay its events while every other account's read models go on; " +
      'answers at once. The account is caught up again when its overview says so (`projections.caughtUp`). Asking again replays it again. ' +
      'Operator credentials only (an access token or session of the account itself: 403). An unknown license code or projection: 404.',
    access: 'operator',
    usesStore: true,
    body: {
      schema: schemaRef('AccountRebuild'),
      description: 'Optional JSON of at most 4 KB: without a body, or without `projection`, every projection.',
      optional: true,
      examples: { all: { summary: 'Every projection', value: {} }, leads: { summary: 'The leads only', value: { projection: 'leads' } } },
    },
    responses: { 202: jsonReply('Asked for: the read models named are emptied for the account, and its replay begins.', schemaRef('AccountRebuildRequested')), 404: responseRef('NotFound') },
  },
  projection('retry', 'Apply parked events again', 'Those that apply are unparked. While a rebuild is requested or running: 409.', {
    200: jsonReply('What the retry did.', schemaRef('RetryResult')),
  }),
]);
