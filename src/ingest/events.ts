import { appendDecisions, metadataFor, rejected, type CommandDeps, type Decision, type IngestContext, type ItemResult } from './context.js';
import { checkIdentities, streams } from './identifiers.js';
import { eventTimes } from './timestamps.js';

/** An event that passed schemas/event.json. */
interface EventItem {
  userId?: string;
  anonymousId?: string;
  eventName: string;
  eventTime?: string;
  eventData?: Record<string, unknown>;
}

function decide(deps: CommandDeps, ctx: IngestContext, item: unknown): Decision {
  const validation = deps.validator.validate('event', item);
  if (!validation.ok) return rejected(validation.message, 'schema');
  const event = item as EventItem;
  const identity = checkIdentities({ userId: event.userId, anonymousId: event.anonymousId });
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
          ...eventTimes(event.eventTime, ctx.receivedAt),
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
