import type { EventStore, NewEvent } from '../eventstore/port.js';
import type { ItemResult } from './results.js';
import type { Validator } from './validation.js';

/** A decision: the events to store for an item, or why it is rejected. */
export type Decision = { events: NewEvent[]; trackId: string } | ItemResult;

/** What a command needs of the event store: appends only. */
export type EventAppender = Pick<EventStore, 'append'>;

export interface CommandDeps {
  store: EventAppender;
  validator: Validator;
}

/**
 * Appends the events of every accepted item and answers each item in order: one atomic unit on
 * Postgres; on EventStoreDB one atomic write per stream (docs/eventstoredb.md).
 */
export async function appendDecisions(store: EventAppender, decisions: Decision[]): Promise<ItemResult[]> {
  const events = decisions.flatMap((d) => ('events' in d ? d.events : []));
  await store.append(events);
  return decisions.map((d) => ('events' in d ? { status: 'queued', trackID: d.trackId } : d));
}
