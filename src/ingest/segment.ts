import type { NewEvent } from '../eventstore/port.js';
import { appendDecisions, type Decision } from './decisions.js';
import type { IngestContext } from './request.js';
import { rejected, type ItemResult } from './results.js';
import type { ItemKind, MappedMessage, MessageSource } from './segment-messages.js';
import { decideItems } from './single-items.js';
import { decideUsers, type UserCommandDeps } from './users.js';

/**
 * Stores Segment messages mapped to spec items (segment-messages.ts) through the spec's own
 * commands: each item is checked by the command of its endpoint, and a message is stored whole or
 * not at all, its first refused item refusing it. All the accepted messages are stored in one
 * append, in the order sent, each event's metadata naming the message it came from.
 */

interface Placed {
  message: number;
  item: Record<string, unknown>;
  eventId: string;
}

/** The number of product events of mapped messages (they count against the account's product-event limit). */
export const productEventCount = (messages: MappedMessage[]): number =>
  messages.reduce((sum, m) => sum + ('items' in m ? m.items.filter((i) => i.kind === 'productsevents').length : 0), 0);

export async function ingestSegment(deps: UserCommandDeps, ctx: IngestContext, messages: MappedMessage[]): Promise<ItemResult[]> {
  // A message sent twice in one request (one messageId, so one trackID) is decided and stored
  // once, its copies answered as the first: EventStoreDB would store ids repeated in one write twice.
  const firstOf = new Map<string, number>();
  const copyOf = messages.map((m, index) => {
    if (!('items' in m)) return index;
    const first = firstOf.get(m.trackId) ?? index;
    firstOf.set(m.trackId, first);
    return first;
  });
  const kept = copyOf.flatMap((first, index) => (first === index ? [index] : []));
  if (kept.length === messages.length) return ingestOnce(deps, ctx, messages);
  const results = await ingestOnce(deps, ctx, kept.map((index) => messages[index] as MappedMessage));
  const resultOf = new Map(kept.map((index, k) => [index, results[k] as ItemResult]));
  return copyOf.map((first) => resultOf.get(first) as ItemResult);
}

async function ingestOnce(deps: UserCommandDeps, ctx: IngestContext, messages: MappedMessage[]): Promise<ItemResult[]> {
  const outcome: (ItemResult | null)[] = messages.map((m) => ('refused' in m ? rejected(m.refused.message, m.refused.reason, m.refused.field) : null));
  const events: NewEvent[][][] = messages.map((m) => ('items' in m ? m.items.map(() => []) : []));
  const placed: Record<ItemKind, (Placed & { slot: number })[]> = { users: [], events: [], productsevents: [] };
  messages.forEach((m, message) => {
    if ('items' in m) m.items.forEach((i, slot) => placed[i.kind].push({ message, slot, item: i.item, eventId: i.eventId }));
  });

  const settle = (list: (Placed & { slot: number })[], decisions: Decision[]): void => {
    decisions.forEach((decision, index) => {
      const { message, slot } = list[index] as Placed & { slot: number };
      if ('events' in decision) (events[message] as NewEvent[][])[slot] = decision.events;
      else outcome[message] ??= decision;
    });
  };
  const contextFor = (list: Placed[]): IngestContext => ({ ...ctx, trackIds: (index) => (list[index] as Placed).eventId });

  // Events first: they claim nothing, so a message refused for one never has its user's types or
  // merge claimed.
  for (const kind of ['events', 'productsevents'] as const) {
    const list = placed[kind];
    if (list.length > 0) settle(list, await decideItems(kind, deps, contextFor(list), list.map((p) => p.item)));
  }
  const users = placed.users.filter((p) => outcome[p.message] === null);
  if (users.length > 0) settle(users, await decideUsers(deps, contextFor(users), users.map((p) => p.item)));

  const decisions: Decision[] = messages.map((m, message) => {
    const refusal = outcome[message];
    if (refusal || !('items' in m)) return refusal as ItemResult;
    return { trackId: m.trackId, events: (events[message] as NewEvent[][]).flat().map((event) => ofMessage(event, m.trackId, m.source)) };
  });
  return appendDecisions(deps.store, decisions, ctx.endpoint);
}

/** Every event of a message carries the message's trackID (docs/events.md) and where it came from. */
const ofMessage = (event: NewEvent, trackId: string, source: MessageSource): NewEvent => ({ ...event, metadata: { ...event.metadata, trackId, source } });
