import type { AccountRefs } from '../eventstore/events.js';
import type { EventStore, NewEvent } from '../eventstore/port.js';
import { EventsTooLargeError } from '../eventstore/too-large.js';
import { ItemTooLargeError } from './errors.js';
import type { Endpoint } from './request.js';
import type { SuppressedSet, SuppressionList } from './suppressed.js';
import type { ItemResult } from './results.js';
import type { Validator } from './validation.js';

/** A decision: the events to store for an item, or why it is rejected. */
export type Decision = { events: NewEvent[]; trackId: string } | ItemResult;

/** What a command needs of the event store: appends only. */
export type EventAppender = Pick<EventStore, 'append'>;

export interface CommandDeps {
  store: EventAppender;
  validator: Validator;
  /** Ids whose items are refused (erasures with suppress: true); none when absent. */
  suppressed?: SuppressionList;
  /** The pseudonyms of people's ids that streams and suppressions are keyed by (src/eventstore/pseudonyms.ts). */
  pseudonyms: { of(accountId: string): Promise<AccountRefs> };
}

const noneSuppressed: SuppressedSet = new Set();

/** The account's suppressed ids, read once per request. */
export const suppressedOf = (deps: CommandDeps, accountId: string): Promise<SuppressedSet> => deps.suppressed?.of(accountId) ?? Promise.resolve(noneSuppressed);

/** What a request's items are checked against: the account's suppressed ids and its pseudonyms of ids, read once per request. */
export async function accountLookups(deps: CommandDeps, accountId: string): Promise<{ suppressed: SuppressedSet; refs: AccountRefs }> {
  const [suppressed, refs] = await Promise.all([suppressedOf(deps, accountId), deps.pseudonyms.of(accountId)]);
  return { suppressed, refs };
}

/**
 * Appends the events of every accepted item and answers each item in order: one atomic unit on
 * Postgres; on EventStoreDB one atomic write per stream, or several under its size limit
 * (docs/eventstoredb.md). An item too large for the store's writes is 413 for the whole request,
 * which then stored nothing (ItemTooLargeError).
 */
export async function appendDecisions(store: EventAppender, decisions: Decision[], endpoint: Endpoint): Promise<ItemResult[]> {
  const events = decisions.flatMap((d) => ('events' in d ? d.events : []));
  try {
    await store.append(events);
  } catch (error) {
    throw error instanceof EventsTooLargeError ? itemTooLarge(error, decisions, endpoint) : error;
  }
  return decisions.map((d) => ('events' in d ? { status: 'queued', trackID: d.trackId } : d));
}

/** The refusal of an item whose events one write cannot hold, naming the element of a bulk request. */
function itemTooLarge(error: EventsTooLargeError, decisions: Decision[], endpoint: Endpoint): ItemTooLargeError {
  const index = decisions.findIndex((d) => 'events' in d && d.trackId === error.trackId);
  const item = endpoint.endsWith('/bulk') ? `element [${index}]` : endpoint === 'segment/batch' ? `message batch[${index}]` : 'the item';
  return new ItemTooLargeError(
    `${item} is too large for the event store: its events take ${error.bytes} bytes, more than the ${error.maxBytes} bytes one write may hold`,
  );
}
