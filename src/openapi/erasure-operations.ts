import { takingAdminToken } from './admin-operations.js';
import { limitParameter, responseRef } from './components.js';
import { closedObject, orNull, schemaRef, type JsonObject } from './json.js';
import { jsonReply, type OperationDoc } from './operation.js';

/** Erasure of a person (docs/api.md, Erasure), under /v1/accounts/:license. */

const path = '/v1/accounts/:license/erasures';
const count = { type: 'integer', minimum: 0 };
const instant = { type: 'string', format: 'date-time' };

export const erasureSchemas: Record<string, JsonObject> = {
  Erasure: closedObject(
    {
      id: { type: 'string', format: 'uuid' },
      userId: orNull('string', { description: 'The userId it names, until it is done; then null: only its pseudonym remains.' }),
      anonymousId: orNull('string', { description: 'The anonymousId it names, until it is done; then null.' }),
      userRef: orNull('string', { description: "The userId's pseudonym in this account (a keyed hash), kept for good: what `POST .../erasures/lookup` matches an id against." }),
      anonymousRef: orNull('string', { description: "The anonymousId's pseudonym, kept for good." }),
      suppress: { type: 'boolean', description: 'Whether new items naming these ids are refused (400, reason `suppressed`).' },
      requestedBy: { type: 'string', description: '`access token <id>`, `account session`, `operator`, or `cli` (`tracking erase`).' },
      requestedByToken: {
        oneOf: [
          { type: 'null' },
          closedObject({
            id: { type: 'string', format: 'uuid' },
            label: { type: 'string', description: 'The label the token was created with: text as its owner typed it.' },
            revokedAt: orNull('string', { format: 'date-time', description: 'When the token was revoked; null while active.' }),
          }),
        ],
        description: 'The access token of `requestedBy` (`access token <id>`), named by its label; null when it was requested otherwise.',
      },
      requestedAt: instant,
      state: { enum: ['pending', 'done', 'failed'] },
      doneAt: orNull('string', { format: 'date-time', description: 'When it was done, or failed.' }),
      counts: {
        oneOf: [
          { type: 'null' },
          closedObject({
            keys: { ...count, description: "Keys erased: the person's, and those of the anonymous ids merged into them." },
            events: { ...count, description: 'Stored events of the person, now unreadable (their trackIDs, types and times remain).' },
            leads: { ...count, description: 'Leads removed.' },
            rejectedItems: { ...count, description: 'Refused items (Ingestion warnings) deleted because they named the person.' },
            idempotencyReplies: { ...count, description: 'Recorded Idempotency-Key replies deleted because they named the person.' },
          }),
        ],
        description: 'What it removed, once done.',
      },
      error: orNull('string', { description: 'Why it failed, when it did.' }),
    },
    { description: 'An erasure request and its state.' },
  ),
  ErasureList: closedObject({
    erasures: { type: 'array', items: schemaRef('Erasure'), description: 'The latest first.' },
    nextCursor: orNull('string'),
  }),
  ErasureLookup: closedObject(
    {
      userRef: orNull('string', { description: "The userId's pseudonym in this account." }),
      anonymousRef: orNull('string', { description: "The anonymousId's pseudonym in this account." }),
      erasures: { type: 'array', items: schemaRef('Erasure'), description: 'The erasures that named either id, the latest first (at most 100).' },
    },
    { description: 'The erasures of an id, found by its pseudonym.' },
  ),
  NewErasure: {
    type: 'object',
    anyOf: [{ required: ['userId'] }, { required: ['anonymousId'] }],
    properties: {
      userId: { type: 'string', maxLength: 255, description: 'The known user: also every anonymous id merged into them.' },
      anonymousId: { type: 'string', maxLength: 255, description: 'An anonymous id.' },
      suppress: { type: 'boolean', description: 'Refuse new items naming these ids from now on.' },
    },
    additionalProperties: false,
  },
};

export const erasureOperations: OperationDoc[] = takingAdminToken([
  {
    method: 'post',
    path,
    operationId: 'request-erasure',
    tag: 'Erasure',
    summary: 'Erase a person',
    description:
      "Every personal value of the person in this account becomes unreadable in the event store and leaves every read model, the ingestion warnings and the recorded replies; their trackIDs, types and times remain, marked with this erasure. Runs as a durable job: usually done within seconds (`GET .../erasures/{id}`). Another account's person of the same id is not touched.",
    access: 'account',
    usesStore: true,
    body: {
      schema: schemaRef('NewErasure'),
      description: 'JSON of at most 4 KB.',
      examples: { user: { summary: 'A known user, and refuse their new items', value: { userId: 'u-42', suppress: true } } },
    },
    responses: { 202: jsonReply('Recorded; it runs in the background.', schemaRef('Erasure')) },
  },
  {
    method: 'post',
    path: `${path}/lookup`,
    operationId: 'lookup-erasures',
    tag: 'Erasure',
    summary: 'Was this id erased: the erasures that named it',
    description:
      'Once an erasure is done, the service keeps no id of the person in clear, only its pseudonym; this finds the erasures of a userId or anonymousId by computing the pseudonym. The ids go in the body, never in the URL (`suppress` is ignored).',
    access: 'account',
    usesStore: true,
    body: { schema: schemaRef('NewErasure'), description: 'JSON of at most 4 KB.', examples: { user: { summary: 'A userId', value: { userId: 'u-42' } } } },
    responses: { 200: jsonReply('The erasures of the id.', schemaRef('ErasureLookup')) },
  },
  {
    method: 'get',
    path,
    operationId: 'list-erasures',
    tag: 'Erasure',
    summary: "The account's erasures, latest first",
    access: 'account',
    usesStore: true,
    parameters: [limitParameter(200, 50), { name: 'cursor', in: 'query', required: false, description: 'The `nextCursor` of an earlier page.', schema: { type: 'string' } }],
    responses: { 200: jsonReply('A page of erasures.', schemaRef('ErasureList')) },
  },
  {
    method: 'get',
    path: `${path}/:id`,
    operationId: 'get-erasure',
    tag: 'Erasure',
    summary: 'One erasure and its state',
    access: 'account',
    usesStore: true,
    responses: { 200: jsonReply('The erasure.', schemaRef('Erasure')), 404: responseRef('NotFound') },
  },
]);
