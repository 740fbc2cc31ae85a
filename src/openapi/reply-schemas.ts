import { tokenScopes } from '../accounts/tokens.js';
import { maxBulkItems } from '../http/ingest-routes.js';
import { closedObject, orNull, schemaRef, type JsonObject } from './json.js';

/** The reply shapes of ingest and errors (docs/decisions.md, Replies), and those of sessions, accounts and tokens. */

const text = { type: 'string' };
const instant = { type: 'string', format: 'date-time' };
const trackID = { type: 'string', format: 'uuid', description: 'The id of the stored item: look it up with the track lookup.' };

export const replySchemas: Record<string, JsonObject> = {
  ErrorReply: closedObject(
    {
      error: { type: 'string', description: 'What is wrong, naming the field, parameter or header.' },
      code: { type: 'integer', description: 'The HTTP status of the reply.' },
    },
    { title: 'Form A: a request-level error', description: 'The reply of every error but an invalid single item: `{ error, code }`.' },
  ),
  Queued: closedObject({ status: { const: 'queued' }, trackID }, { title: 'An item stored' }),
  ItemError: closedObject(
    { status: { const: 'error' }, message: { type: 'string', description: 'What is wrong with the item, naming the field.' } },
    { title: 'An item refused' },
  ),
  QueuedReply: closedObject({ response: schemaRef('Queued') }, { title: 'Accepted: the item is stored' }),
  ItemErrorReply: closedObject(
    { response: schemaRef('ItemError') },
    { title: 'Form B: an invalid item', description: 'The reply of a single item whose content is invalid (HTTP 400); nothing was stored.' },
  ),
  BulkReply: closedObject(
    {
      response: {
        type: 'array',
        minItems: 1,
        maxItems: maxBulkItems,
        description: 'One result per element of the request, in order: an element refused does not stop the others.',
        items: { oneOf: [schemaRef('Queued'), schemaRef('ItemError')] },
      },
    },
    { title: 'The results of a bulk request' },
  ),
  Health: closedObject({ status: { const: 'ok' } }),

  AccountRef: closedObject({ licenseCode: text, name: text }),
  Session: {
    oneOf: [
      closedObject({ kind: { const: 'account' }, account: schemaRef('AccountRef') }, { title: 'An account owner' }),
      closedObject({ kind: { const: 'operator' } }, { title: 'An operator' }),
    ],
  },
  SignIn: {
    oneOf: [
      closedObject(
        { licenseCode: { type: 'string', minLength: 1, maxLength: 512 }, accessToken: { type: 'string', minLength: 1, maxLength: 512, description: 'Of scope `ingest+read`.' } },
        { title: 'As an account owner' },
      ),
      closedObject({ adminToken: { type: 'string', minLength: 1, maxLength: 512 } }, { title: 'As an operator' }),
    ],
  },
  Account: closedObject({ licenseCode: text, name: text, createdAt: instant }),
  AccountList: closedObject({ accounts: { type: 'array', items: schemaRef('Account'), description: 'Oldest first.' } }),
  NewAccount: {
    type: 'object',
    required: ['name'],
    properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'Trimmed; not only spaces; no control characters or unpaired surrogates.' } },
  },
  CreatedAccount: closedObject({
    licenseCode: text,
    accessToken: { type: 'string', description: 'Scope `ingest+read`, label `initial`: shown this once.' },
    name: text,
  }),
  TokenScope: { type: 'string', enum: [...tokenScopes], description: '`ingest` posts items only; `ingest+read` also reads (read API, dashboard) and manages tokens.' },
  AccessToken: closedObject({
    id: { type: 'string', format: 'uuid' },
    label: text,
    scope: schemaRef('TokenScope'),
    createdAt: instant,
    lastUsedAt: orNull('string', { format: 'date-time', description: 'To the minute.' }),
  }),
  AccessTokenList: closedObject({ tokens: { type: 'array', items: schemaRef('AccessToken'), description: 'The active ones, oldest first.' } }),
  NewAccessToken: {
    type: 'object',
    required: ['label', 'scope'],
    properties: {
      label: { type: 'string', minLength: 1, maxLength: 100, description: 'Trimmed; no control characters.' },
      scope: schemaRef('TokenScope'),
    },
  },
  CreatedAccessToken: closedObject({
    id: { type: 'string', format: 'uuid' },
    label: text,
    scope: schemaRef('TokenScope'),
    createdAt: instant,
    lastUsedAt: { type: 'null' },
    accessToken: { type: 'string', description: 'Shown this once: only its SHA-256 is kept.' },
  }),
};
