import { appendDecisions, metadataFor, rejected, type CommandDeps, type Decision, type IngestContext, type ItemResult } from './context.js';
import { identityProblem, streams } from './identifiers.js';
import { toUtcInstant } from './timestamps.js';

/** An event that passed schemas/event.json. */
interface EventItem {
  userId?: string;
  anonymousId?: string;
  eventName: string;
  eventTime?: string;
  eventData?: Record<string, unknown>;
}

/** Ids of the item that are present but not usable identities, as a rejection. */
export function checkIdentities(item: Record<string, unknown>, fields: readonly string[]): ItemResult | null {
  for (const field of fields) {
    const id = item[field];
    const problem = typeof id === 'string' ? identityProblem(field, id) : null;
    if (problem) return rejected(problem, 'identity');
  }
  return null;
}

/** `eventTime` as sent and as a UTC instant; without one, the time of receipt. */
export function eventTimes(ctx: IngestContext, eventTime: string | undefined): { eventTime: string | null; eventTimeUtc: string } {
  return eventTime === undefined
    ? { eventTime: null, eventTimeUtc: ctx.receivedAt }
    : { eventTime, eventTimeUtc: toUtcInstant(eventTime) as string };
}

function decide(deps: CommandDeps, ctx: IngestContext, item: unknown): Decision {
  const validation = deps.validator.validate('event', item);
  if (!validation.ok) return rejected(validation.message, 'schema');
  const event = item as EventItem;
  const identity = checkIdentities(event as unknown as Record<string, unknown>, ['userId', 'anonymousId']);
  if (identity) return identity;
  const trackId = ctx.trackIds(0);
  const stream =
    event.userId !== undefined ? streams.user(ctx.accountId, event.userId) : streams.anonymous(ctx.accountId, event.anonymousId as string);
  return {
    trackId,
    events: [
      {
        id: trackId,
        stream,
        type: 'EventTracked',
        data: {
          ...(event.userId !== undefined && { userId: event.userId }),
          ...(event.anonymousId !== undefined && { anonymousId: event.anonymousId }),
          eventName: event.eventName,
          ...eventTimes(ctx, event.eventTime),
          eventData: event.eventData ?? {},
        },
        metadata: metadataFor(ctx, trackId),
      },
    ],
  };
}

export async function ingestEvent(deps: CommandDeps, ctx: IngestContext, item: unknown): Promise<ItemResult> {
  const [result] = await appendDecisions(deps.store, [decide(deps, ctx, item)]);
  return result as ItemResult;
}
