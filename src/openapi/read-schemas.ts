import { endpoints as ingestEndpoints } from '../ingest/request.js';
import { eventTypes } from '../eventstore/events.js';
import { attributesUnderSpecNames, type SystemAttributeType } from '../spec/system-attributes.js';
import { liveKinds } from '../../projections/track-index/live.js';
import { projections } from '../../projections/index.js';
import { closedObject, orNull, schemaRef, withOptional, type JsonObject } from './json.js';

const endpoints: string[] = [...ingestEndpoints];

/** The reply shapes of the read and operator API (docs/api.md): leads, track lookup, live events, warnings, overview, projections. */

const text = { type: 'string' };
const instant = { type: 'string', format: 'date-time' };
const count = { type: 'integer', minimum: 0 };
const trackID = { type: 'string', format: 'uuid' };
const anyObject = { type: 'object' };


const jsonTypeOf: Record<SystemAttributeType, string> = { STRING: 'string', INT: 'integer', INT4: 'integer', BOOL: 'boolean', TIMESTAMPTZ: 'string' };

/** A lead's system attributes under their docs/spec.md 2.2 names (src/spec/system-attributes.ts): null until sent, unless they have a default. */
const systemAttributeProperties: Record<string, JsonObject> = Object.fromEntries(
  attributesUnderSpecNames.map((attribute) => {
    const type = jsonTypeOf[attribute.type];
    const more: JsonObject = attribute.type === 'TIMESTAMPTZ' ? { format: 'date-time', description: 'The UTC instant of the date-time sent.' } : {};
    return [attribute.column, attribute.default === undefined ? orNull(type, more) : { type, ...more }];
  }),
);

const rebuildStatus = closedObject({
  state: { enum: ['requested', 'running', 'finished'] },
  requestedAt: orNull('string', { format: 'date-time' }),
  startedAt: orNull('string', { format: 'date-time' }),
  finishedAt: orNull('string', { format: 'date-time' }),
  target: orNull('integer', { description: 'Events to replay, counted when it started.' }),
});

const parkedEvent = closedObject({
  eventId: { type: 'string', format: 'uuid' },
  eventType: text,
  accountId: orNull('string'),
  globalPosition: count,
  error: text,
  sqlstate: orNull('string'),
  attempts: count,
  parkedAt: instant,
});

const workerName = { type: 'string', description: '`pid@host` of the worker process.' };

const warningFields = {
  at: instant,
  endpoint: { enum: endpoints },
  status: { type: 'integer', description: 'The HTTP status the client got: 200 for an element of a bulk request.' },
  message: { type: 'string', description: 'The text the client got (its first 2 KB).' },
  excerpt: orNull('string', { description: 'The start of the body (decompressed), or the bulk element as JSON; null when nothing of the body was read.' }),
  truncated: { type: 'boolean' },
  client: orNull('string', { description: "The library that sent the item, as its message names itself (a Segment message's `context.library`: `@segment/analytics-node 3.1.0`); null when it does not say." }),
};
const reason = { type: 'string', description: 'The label of `tracking_ingest_rejected_items_total`: `schema`, `identity`, `malformed_json`, `too_large`, ...' };
const field = {
  type: 'string',
  description: "The item's top-level field the refusal is about (`eventTime`, `attributes`), `userId/anonymousId` when neither was sent, `unknown field`; empty for the request or item as a whole.",
};
const { endpoint: warningEndpoint, ...exampleFields } = warningFields;

const nextCursor = orNull('string', { description: 'The `cursor` of the next page; null at the end. A page ends at its `limit` or before the item that would take it past 1 MiB of JSON (docs/api.md, Read replies bounded in bytes).' });
const truncated = {
  ...schemaRef('Truncated'),
  description: 'Only when a payload was too large for a list (over 4 KiB of JSON text): it holds null, and this says so by its field name. `GET .../events/{eventId}` gives the event in full.',
};

/** Lead fields that are the same in full and in a list. */
const leadFields = (): Record<string, JsonObject> => ({
  userId: orNull('string'),
  anonymousId: orNull('string'),
  firstName: orNull('string'),
  lastName: orNull('string'),
  ...systemAttributeProperties,
  mergedInto: orNull('string'),
  createdAt: instant,
  updatedAt: instant,
  version: { type: 'integer' },
});
const attributes = { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] }, description: 'Custom attributes.' };
const attributeTypes = { type: 'object', additionalProperties: { enum: ['string', 'number', 'boolean', 'datetime'] }, description: "Each custom attribute's registered type." };
const anonymousIds = { type: 'array', items: text, description: 'The anonymous ids merged into this known user.' };
const nullable = (schema: JsonObject): JsonObject => ({ ...schema, type: [schema.type as string, 'null'] });

const storedEventFields = {
  eventId: { type: 'string', format: 'uuid' },
  type: { enum: [...eventTypes] },
  stream: text,
  streamPosition: count,
  globalPosition: count,
  recordedAt: instant,
};
const repeatFields = {
  alsoStoredAt: {
    type: 'array',
    items: schemaRef('StoredAt'),
    minItems: 1,
    description: 'Only on an event id the store holds more than once (EventStoreDB may: docs/eventstoredb.md): where its later copies are, oldest first. The event is shown once, at its first copy.',
  },
  repeatOf: { ...schemaRef('StoredAt'), description: "Only on a later copy of an event id, in a stream's events: where its first copy is." },
  erasedBy: {
    ...closedObject({ erasureId: orNull('string', { format: 'uuid' }), erasedAt: orNull('string', { format: 'date-time' }) }),
    description: 'Only on an event of an erased person: the erasure that made its personal fields unreadable (they show empty), and when (docs/api.md, Erasure).',
  },
};
/** On a timeline entry of an erased person (an anonymous id merged into the lead, erased alone). */
const timelineErasedBy = {
  ...closedObject({
    erasureId: orNull('string', { format: 'uuid', description: 'Null when its key is gone and nothing says why (a database restored from before the event).' }),
    erasedAt: orNull('string', { format: 'date-time' }),
  }),
  description:
    'Only on an entry of an erased person: the erasure that made it unreadable, and when (docs/api.md, Erasure). The entry keeps its type, times and trackID, and nothing the person sent.',
};
const metadataDescription = 'trackId, accountId, receivedAt, schemaVersion (docs/events.md).';

const bucket = closedObject({ start: instant, endpoint: { enum: endpoints }, accepted: count, rejected: count });

export const readSchemas: Record<string, JsonObject> = {
  Lead: closedObject(
    { ...leadFields(), anonymousIds, attributes, attributeTypes },
    { description: 'A lead: a known user (userId) or an anonymous profile, with every system attribute of a user profile.' },
  ),
  ListedLead: withOptional(
    closedObject(
      { ...leadFields(), anonymousIds: nullable(anonymousIds), attributes: nullable(attributes), attributeTypes: nullable(attributeTypes) },
      { description: 'A lead as a list shows it: `anonymousIds`, `attributes` and `attributeTypes` are null when too large for a list (`truncated`); `GET .../leads/{id}` gives them in full.' },
    ),
    { truncated },
  ),
  Truncated: {
    type: 'object',
    minProperties: 1,
    additionalProperties: closedObject({
      bytes: { type: 'integer', minimum: 0, description: 'Bytes of the payload as JSON text (UTF-8).' },
      excerpt: { type: 'string', description: 'The start of that text (512 characters).' },
    }),
    description: 'The payloads a list left out of an item, by the name of the field that holds null in their place.',
  },
  LeadPage: closedObject({
    leads: { type: 'array', items: schemaRef('ListedLead'), description: 'Newest first.' },
    nextCursor,
    total: closedObject(
      {
        count: count,
        exact: { type: 'boolean', description: 'False: `count` is an estimate (show it as "about").' },
      },
      { description: 'The leads of the filters (`q`, `kind`, `attribute`), every page: counted exactly up to 10,000 when that takes under 50 ms, else PostgreSQL\'s estimate.' },
    ),
  }),
  LeadEvents: closedObject({
    events: {
      type: 'array',
      description: 'Latest first.',
      items: withOptional(closedObject({
        eventId: { type: 'string', format: 'uuid' },
        userId: orNull('string'),
        anonymousId: orNull('string'),
        eventName: text,
        eventTime: orNull('string', { description: 'As sent.' }),
        eventTimeUtc: instant,
        eventData: orNull('object', { description: 'Null when too large for a list (`truncated`).' }),
        receivedAt: instant,
        trackID: orNull('string', { format: 'uuid', description: 'Null until the track index has the event.' }),
      }), { truncated }),
    },
    nextCursor,
  }),
  TimelineEntry: {
    oneOf: [
      withOptional(
        closedObject(
          { kind: { const: 'profile' }, at: instant, eventId: { type: 'string', format: 'uuid' }, trackID, eventType: { enum: ['UserUpserted', 'ProfilesMerged'] } },
          {
            title: 'A profile sent for the lead',
            description: 'With the id of the profile it was sent for: `userId` or `anonymousId`; an erased one (`erasedBy`) with neither.',
          },
        ),
        { userId: text, anonymousId: text, erasedBy: timelineErasedBy },
      ),
      withOptional(
        closedObject(
          {
            kind: { const: 'event' },
            at: instant,
            eventId: { type: 'string', format: 'uuid' },
            trackID,
            eventName: orNull('string'),
            eventTime: orNull('string', { description: 'As sent: a zone-less time is read as UTC, so show `eventTimeUtc`.' }),
            eventTimeUtc: orNull('string', { format: 'date-time', description: 'The UTC instant of `eventTime` (its receipt when none was sent).' }),
            eventData: orNull('object'),
          },
          {
            title: 'An event of the lead',
            description:
              'Its details are null until the user-events projection has applied it; `eventData` also when too large for a list (`truncated`). An erased one (`erasedBy`) has `eventName`, `eventTime` and `eventData` null and keeps `eventTimeUtc`.',
          },
        ),
        { truncated, erasedBy: timelineErasedBy },
      ),
    ],
  },
  Timeline: closedObject({ entries: { type: 'array', items: schemaRef('TimelineEntry'), description: 'Latest first.' }, nextCursor }),
  StoredEvent: withOptional(
    closedObject({ ...storedEventFields, data: anyObject, metadata: { type: 'object', description: metadataDescription } }, { description: 'A stored event in full.' }),
    repeatFields,
  ),
  ListedStoredEvent: withOptional(
    closedObject(
      { ...storedEventFields, data: orNull('object'), metadata: orNull('object', { description: metadataDescription }) },
      { description: 'A stored event as a list shows it: `data` or `metadata` null when too large for a list (`truncated`).' },
    ),
    { ...repeatFields, truncated },
  ),
  StoredAt: closedObject({ stream: text, streamPosition: count, globalPosition: count, recordedAt: instant }, { description: 'Where one copy of a stored event is.' }),
  TrackLookup: closedObject({
    trackID,
    events: { type: 'array', items: schemaRef('ListedStoredEvent'), description: "The trackID's events (on the first pages)." },
    streams: {
      type: 'object',
      additionalProperties: { type: 'array', items: schemaRef('ListedStoredEvent') },
      description: 'Each stream of the events, up to and including them (at most the 100 before them); a stream may go on in the next page.',
    },
    nextCursor,
  }),
  LivePage: closedObject({
    items: {
      type: 'array',
      description: 'Newest first.',
      items: closedObject({
        trackID,
        kind: { enum: [...liveKinds] },
        eventType: { enum: [...eventTypes] },
        name: orNull('string', { description: 'The eventName of an event or product event; null for other items (and for items indexed before this field existed, until the track index is rebuilt).' }),
        userId: orNull('string'),
        anonymousId: orNull('string'),
        productId: orNull('string'),
        preview: orNull('string', { description: "The start of the item's payload as JSON text (eventData, properties, or the profile's fields), at most 120 characters, ending in '…' when cut." }),
        receivedAt: instant,
        stream: text,
        globalPosition: count,
      }),
    },
    cursor: { type: 'string', description: 'Pass as `after` to get only newer items.' },
    olderCursor: orNull('string', { description: 'Pass as `before` to get the items older than these; null when there are none.' }),
  }),
  WarningGroups: closedObject({
    groups: {
      type: 'array',
      description: 'Latest seen first.',
      maxItems: 200,
      items: closedObject({
        reason,
        field,
        endpoint: warningEndpoint,
        count,
        lastSeenAt: instant,
        examples: { type: 'array', maxItems: 3, items: closedObject(exampleFields), description: 'Newest first.' },
      }),
    },
  }),
  RecentWarnings: closedObject({
    warnings: { type: 'array', maxItems: 1000, items: closedObject({ ...warningFields, reason, field }), description: 'Newest first.' },
    nextCursor,
  }),
  Overview: closedObject({
    perMinute: { type: 'array', items: bucket, description: 'The last 60 minutes, buckets with traffic, oldest first.' },
    perHour: { type: 'array', items: bucket, description: 'The last 7 days, buckets with traffic, oldest first.' },
    projections: closedObject(
      {
        lagSeconds: { type: 'number', minimum: 0, description: "Age of this account's oldest event not applied yet by some read model; 0 when caught up." },
        lagEvents: { ...count, description: "This account's events not applied yet, over its read models." },
        caughtUp: { type: 'boolean' },
      },
      { description: "How far behind this account's own read models are: other accounts' backlogs do not count." },
    ),
  }),
  RebuildStatus: rebuildStatus,
  ProjectionStatus: withOptional(
    closedObject(
      {
        projection: { enum: projections.map((p) => p.name) },
        eventsApplied: { ...count, description: "Over every account's cursor, since they were made (a rebuild makes them again)." },
        updatedAt: orNull('string', { format: 'date-time' }),
        lagEvents: { ...count, description: 'Events stored and not applied yet, over the accounts counted.' },
        lagSeconds: { type: 'number', minimum: 0, description: 'Age of the oldest event not applied yet, of any account.' },
        accountsBehind: count,
        rebuild: { oneOf: [schemaRef('RebuildStatus'), { type: 'null' }] },
        parked: closedObject({ events: count, latest: { type: 'array', items: parkedEvent, description: 'The latest 3.' } }),
      },
      { description: 'As `tracking projections status --json` (docs/projections.md).' },
    ),
    { lagEventsAtLeast: { const: true, description: 'The store stopped counting: the lag is at least `lagEvents`.' } },
  ),
  ProjectionStatusList: closedObject({
    projections: { type: 'array', items: schemaRef('ProjectionStatus') },
    parts: {
      type: 'array',
      description: 'The parts accounts are hashed into, each claimed by one worker under a lease (docs/projections.md, Parts, claims and checkpoints).',
      items: closedObject({
        part: count,
        owner: { oneOf: [closedObject({ worker: workerName, workerId: { type: 'string', format: 'uuid' } }), { type: 'null' }] },
        epoch: { ...count, description: 'Grows at every claim; a batch commits only under the epoch its worker claimed.' },
        leaseExpiresAt: orNull('string', { format: 'date-time' }),
        claimedAt: orNull('string', { format: 'date-time' }),
        accountsBehind: orNull('integer', { description: 'As its owner reported last: every 2 s when it changes, at least every 30 s.' }),
        reportedAt: orNull('string', { format: 'date-time' }),
      }),
    },
    workers: {
      type: 'array',
      description: 'Workers alive.',
      items: closedObject({ workerId: { type: 'string', format: 'uuid' }, worker: workerName, startedAt: instant, heartbeatAt: instant, parts: { type: 'array', items: count } }),
    },
    accountsBehind: {
      type: 'array',
      maxItems: 10,
      description: 'The accounts furthest behind, worst first.',
      items: closedObject({ accountId: text, projection: { enum: projections.map((p) => p.name) }, lagEvents: count, lagSeconds: { type: 'number', minimum: 0 }, checkpoint: orNull('string') }),
    },
  }),
  RebuildRequested: closedObject({ projection: text, rebuild: schemaRef('RebuildStatus') }),
  AccountRebuild: {
    type: 'object',
    properties: { projection: { enum: projections.map((p) => p.name), description: 'The projection to rebuild for the account; left out, every one.' } },
    additionalProperties: false,
  },
  AccountRebuildRequested: closedObject({
    accountId: { type: 'string', format: 'uuid', description: 'The account, as `accountsBehind` of the status names it.' },
    projections: { type: 'array', minItems: 1, items: { enum: projections.map((p) => p.name) }, description: 'Those rebuilt for it.' },
  }),
  RetryResult: closedObject({ projection: text, retried: count, applied: count, stillParked: count }),
};
