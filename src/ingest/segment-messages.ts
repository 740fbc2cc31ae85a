import { createHash } from 'node:crypto';
import { addContext, hasCampaign, libraryOf, type AddressPolicy } from './segment-context.js';
import { commerceItems, TooManyProducts } from './segment-commerce.js';
import { messageTime, type RequestClock } from './segment-time.js';
import { ProfileBuilder } from './segment-traits.js';
import type { RejectReason } from './results.js';
import { derivedEventId, uuidV7 } from './track-ids.js';

/**
 * Segment's calls as the items of docs/spec.md 2 (docs/segment.md has the table): each message
 * becomes one or more items of the spec's own endpoints, which the spec's commands then check and
 * store. Only the translation lives here; every rule of the spec stays with its command.
 */

export const segmentTypes = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
export type SegmentType = (typeof segmentTypes)[number];
export const isSegmentType = (value: unknown): value is SegmentType => typeof value === 'string' && (segmentTypes as readonly string[]).includes(value);

/** The kinds of spec item a message can become, named as their commands' endpoints. */
export type ItemKind = 'users' | 'events' | 'productsevents';

export interface SpecItem {
  kind: ItemKind;
  item: Record<string, unknown>;
  /** The id of the item's (first) event: the message's trackID for its first item. */
  eventId: string;
}

/** What the stored events of a message keep of it, in their metadata (docs/events.md). */
export interface MessageSource {
  api: 'segment';
  messageId?: string;
  library?: string;
}

export type MappedMessage =
  | { trackId: string; items: SpecItem[]; source: MessageSource }
  | { refused: { message: string; reason: RejectReason; field: string }; source: MessageSource };

export interface MessageSettings {
  accountId: string;
  /** The request's times (segment-time.ts). */
  clock: RequestClock;
  /** What the account keeps of a visitor's address (segment-context.ts). */
  addressPolicy: AddressPolicy;
  /** The address of a page that sent the message itself (browser keys): context.ip stands for it otherwise. */
  pageAddress?: string;
  /** The batch's context: every message's that has none of its own (field by field). */
  sharedContext?: unknown;
}

/** The names of the event items of page and screen calls. */
export const pageEventName = 'Page Viewed';
export const screenEventName = 'Screen Viewed';

/** Namespace of the name-based trackIDs of messageIds (UUIDv5 of account and messageId). */
export const messageIdNamespace = '7c3a1f44-1d0e-4d55-9f4c-2b2f7b0e6a18';
const namespaceBytes = Buffer.from(messageIdNamespace.replaceAll('-', ''), 'hex');

/**
 * UUIDv5 (RFC 9562) of `name` in the messageId namespace. Written out rather than uuid's v5, which
 * re-reads the namespace and copies the name a character at a time: on every message of every
 * batch, that was most of the mapping's cost (docs/performance.md). test/segment-messages.unit
 * holds the two equal.
 */
function uuidV5(name: string): string {
  const bytes = createHash('sha1').update(namespaceBytes).update(name, 'utf8').digest();
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The trackID of a message: from its messageId, so that every copy of it stores the same events; fresh without one. */
export const messageTrackId = (accountId: string, messageId: string | undefined): string =>
  messageId === undefined ? uuidV7() : uuidV5(`${accountId}\n${messageId}`);

const maxMessageIdLength = 255;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

class Refusal {
  constructor(
    readonly message: string,
    readonly field: string,
    readonly reason: RejectReason = 'schema',
  ) {}
}

/** An optional object field of the message: absent or null reads as {}. */
function objectField(message: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = message[field];
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new Refusal(`${field} must be an object`, field);
  return value;
}

function stringField(message: Record<string, unknown>, field: string, required: boolean): string | undefined {
  const value = message[field];
  if (value === undefined || value === null) {
    if (required) throw new Refusal(`${field} is required`, field);
    return undefined;
  }
  if (typeof value !== 'string') throw new Refusal(`${field} must be a string`, field);
  return value;
}

/** The ids of Segment's messages: a string, or a number (a database id), as Segment takes them. */
function idField(message: Record<string, unknown>, field: string, required: boolean): string | undefined {
  const value = message[field];
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return stringField(message, field, required);
}

/**
 * The person of a message: userId, anonymousId or both (checked as identities by the commands). A
 * blank id beside the other is absent: RudderStack's browser library sends `userId: ""` for
 * anonymous visitors.
 */
function personOf(message: Record<string, unknown>): { userId?: string; anonymousId?: string } {
  let userId = idField(message, 'userId', false);
  let anonymousId = idField(message, 'anonymousId', false);
  if (userId?.trim() === '' && anonymousId !== undefined) userId = undefined;
  else if (anonymousId?.trim() === '' && userId !== undefined) anonymousId = undefined;
  if (userId === undefined && anonymousId === undefined) throw new Refusal('userId or anonymousId is required', 'userId/anonymousId', 'identity');
  return { ...(userId !== undefined && { userId }), ...(anonymousId !== undefined && { anonymousId }) };
}

/** A users item of the person with the profile's fields (the spec's user: attributes always sent). */
const userItem = (person: Record<string, string>, profile: ProfileBuilder): Record<string, unknown> => ({
  ...person,
  ...profile.fields.profile,
  attributes: profile.fields.attributes,
});

/** Fields of context.page that a page view keeps when its properties lack them. */
const pageFields = ['path', 'referrer', 'search', 'title', 'url'] as const;

/**
 * The context fields the mapping reads, from the message's context, else from the batch's
 * (never a merged copy: a batch's context is read, not multiplied by its messages).
 */
const contextFields = ['campaign', 'userAgent', 'device', 'ip', 'library', 'page'] as const;
export function contextOf(message: Record<string, unknown>, shared: unknown): Record<string, unknown> {
  const own = isObject(message.context) ? message.context : {};
  if (!isObject(shared)) return own;
  const context: Record<string, unknown> = {};
  for (const field of contextFields) {
    const value = own[field] ?? shared[field];
    if (value !== undefined) context[field] = value;
  }
  return context;
}

function translate(message: Record<string, unknown>, type: SegmentType, settings: MessageSettings, eventTime: string | undefined): Omit<SpecItem, 'eventId'>[] {
  const context = contextOf(message, settings.sharedContext);
  const profile = new ProfileBuilder('traits');
  const withContext = (): void => addContext(profile, context, settings.pageAddress, settings.addressPolicy);
  const time = eventTime === undefined ? {} : { eventTime };
  switch (type) {
    case 'identify': {
      const person = personOf(message);
      const problem = profile.addTraits(objectField(message, 'traits'));
      if (problem) throw new Refusal(problem, 'traits');
      withContext();
      return [{ kind: 'users', item: userItem(person, profile) }];
    }
    case 'alias': {
      const userId = idField(message, 'userId', true) as string;
      const previousId = idField(message, 'previousId', true) as string;
      return [{ kind: 'users', item: { userId, anonymousId: previousId, attributes: {} } }];
    }
    case 'group': {
      const person = personOf(message);
      const groupId = idField(message, 'groupId', true) as string;
      const problem = profile.addCompanyTraits(objectField(message, 'traits'));
      if (problem) throw new Refusal(problem, 'traits');
      profile.contextAttribute('group_id', groupId);
      withContext();
      return [{ kind: 'users', item: userItem(person, profile) }];
    }
    case 'track':
    case 'page':
    case 'screen': {
      const person = personOf(message);
      const properties = objectField(message, 'properties');
      let items: Omit<SpecItem, 'eventId'>[];
      if (type === 'track') {
        const event = stringField(message, 'event', true) as string;
        items = commerceItems(event, properties, person, time) ?? [{ kind: 'events', item: { ...person, eventName: event, ...time, eventData: properties } }];
      } else {
        const name = stringField(message, 'name', false);
        const category = stringField(message, 'category', false);
        const page = type === 'page' && isObject(context) && isObject(context.page) ? context.page : {};
        const fromPage = Object.fromEntries(pageFields.flatMap((f) => (page[f] !== undefined && properties[f] === undefined ? [[f, page[f]]] : [])));
        const eventData = { ...(name !== undefined && { name }), ...(category !== undefined && { category }), ...fromPage, ...properties };
        items = [{ kind: 'events', item: { ...person, eventName: type === 'page' ? pageEventName : screenEventName, ...time, eventData } }];
      }
      // A landing from a tagged link (context.campaign) also tells the profile where the person came from.
      if (hasCampaign(context)) {
        withContext();
        items.push({ kind: 'users', item: userItem(person, profile) });
      }
      return items;
    }
  }
}

/**
 * One Segment message as spec items, or why it is refused. `type` is the call's (the path of a
 * single call) or, for an element of a batch, the message's own.
 */
export function mapMessage(raw: unknown, callType: SegmentType | undefined, settings: MessageSettings): MappedMessage {
  const message = isObject(raw) ? raw : {};
  const source: MessageSource = { api: 'segment', ...(typeof message.messageId === 'string' && { messageId: message.messageId.slice(0, maxMessageIdLength) }) };
  const library = libraryOf(contextOf(message, settings.sharedContext));
  if (library !== undefined) source.library = library;
  try {
    if (!isObject(raw)) throw new Refusal('a message must be a JSON object', '');
    const type = callType ?? message.type;
    if (!isSegmentType(type)) throw new Refusal(`type must be one of ${segmentTypes.join(', ')}`, 'type');
    const messageId = stringField(message, 'messageId', false);
    if (messageId !== undefined && (messageId.trim() === '' || messageId.length > maxMessageIdLength)) {
      throw new Refusal(`messageId must be 1 to ${maxMessageIdLength} characters`, 'messageId');
    }
    const time = messageTime(message, settings.clock);
    if ('problem' in time) throw new Refusal(time.problem, time.field, 'datetime');
    const trackId = messageTrackId(settings.accountId, messageId);
    const items = translate(message, type, settings, time.eventTime).map((item, index) => ({ ...item, eventId: index === 0 ? trackId : derivedEventId(trackId, `segment item ${index}`) }));
    return { trackId, items, source };
  } catch (error) {
    if (error instanceof Refusal) return { refused: { message: error.message, reason: error.reason, field: error.field }, source };
    if (error instanceof TooManyProducts) return { refused: { message: error.message, reason: 'schema', field: 'properties' }, source };
    throw error;
  }
}
