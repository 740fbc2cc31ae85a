import type { NewEvent } from '../eventstore/port.js';
import { classifyAttributes, type AttributeType } from './attributes.js';
import type { AttributeTypeRegistry } from './attribute-registry.js';
import { appendDecisions, metadataFor, rejected, type CommandDeps, type Decision, type IngestContext, type ItemResult } from './context.js';
import { checkIdentities, streams } from './identifiers.js';
import type { IdentityMap } from './identity-map.js';
import { toUtcInstant } from './timestamps.js';
import { derivedEventId } from './track-ids.js';

/** A user object that passed schemas/user.json. */
interface UserItem {
  userId?: string;
  anonymousId?: string;
  attributes: Record<string, string | number | boolean>;
  [field: string]: unknown;
}

/** System attributes typed TIMESTAMPTZ in spec 2.2. */
const systemDateTimes = ['birth_date', 'last_active', 'updated_at', 'date_identified'] as const;

interface Prepared {
  index: number;
  user: UserItem;
  types: Record<string, AttributeType>;
  /** UTC instants of every date-time sent, by field path (`birth_date`, `attributes.last_login`). */
  instants: Record<string, string>;
}

export interface UserCommandDeps extends CommandDeps {
  registry: AttributeTypeRegistry;
  identities: IdentityMap;
}

function prepare(deps: UserCommandDeps, item: unknown, index: number): Prepared | ItemResult {
  const validation = deps.validator.validate('user', item);
  if (!validation.ok) return rejected(validation.message, 'schema');
  const user = item as UserItem;
  const identity = checkIdentities({ userId: user.userId, anonymousId: user.anonymousId });
  if (identity) return identity;
  const classified = classifyAttributes(user.attributes);
  if (typeof classified === 'string') return rejected(classified, 'datetime');
  const instants: Record<string, string> = {};
  for (const field of systemDateTimes) {
    const value = user[field];
    if (typeof value === 'string') instants[field] = toUtcInstant(value) as string;
  }
  for (const [key, instant] of Object.entries(classified.instants)) instants[`attributes.${key}`] = instant;
  return { index, user, types: classified.types, instants };
}

function upsertEvent(ctx: IngestContext, prepared: Prepared, trackId: string): NewEvent {
  const { userId, anonymousId, attributes, ...profile } = prepared.user;
  const stream = userId !== undefined ? streams.user(ctx.accountId, userId) : streams.anonymous(ctx.accountId, anonymousId as string);
  return {
    id: trackId,
    stream,
    type: 'UserUpserted',
    data: {
      ...(userId !== undefined && { userId }),
      ...(anonymousId !== undefined && { anonymousId }),
      profile,
      attributes,
      attributeTypes: prepared.types,
      instants: prepared.instants,
    },
    metadata: metadataFor(ctx, trackId),
  };
}

/**
 * Validates, checks attribute types and merges, then appends: one result per user, in order.
 * Users are checked in order; only users that pass both checks count for the types of later users
 * and have their new keys registered, so a rejected user leaves nothing behind (short of two
 * requests racing for the same new key, where the loser's merge claim stays for its retry).
 */
export async function ingestUsers(deps: UserCommandDeps, ctx: IngestContext, items: unknown[]): Promise<ItemResult[]> {
  const outcomes: (Prepared | ItemResult)[] = items.map((item, index) => prepare(deps, item, index));
  const trackIds = items.map((_, index) => ctx.trackIds(index));
  const candidates = outcomes.filter((o): o is Prepared => 'user' in o);
  const merges = new Map<number, NewEvent>();
  const admissions = await deps.registry.admit(
    ctx.accountId,
    candidates.map((c) => c.types),
    async (i) => {
      const candidate = candidates[i] as Prepared;
      const merge = await claimMerge(deps, ctx, candidate, trackIds[candidate.index] as string);
      if ('status' in merge) outcomes[candidate.index] = merge;
      else if (merge.event) merges.set(candidate.index, merge.event);
      return !('status' in merge);
    },
  );
  candidates.forEach((candidate, i) => {
    const admission = admissions[i];
    if (admission && !admission.accepted && admission.conflict) outcomes[candidate.index] = rejected(admission.conflict, 'attribute_type');
  });

  const decisions: Decision[] = outcomes.map((outcome, index) => {
    if (!('user' in outcome)) return outcome;
    const trackId = trackIds[index] as string;
    const merge = merges.get(index);
    return { trackId, events: merge ? [upsertEvent(ctx, outcome, trackId), merge] : [upsertEvent(ctx, outcome, trackId)] };
  });
  return appendDecisions(deps.store, decisions);
}

/** With both ids, claims the merge and makes its event; a merge into another user is a rejection. */
async function claimMerge(
  deps: UserCommandDeps,
  ctx: IngestContext,
  prepared: Prepared,
  trackId: string,
): Promise<{ event?: NewEvent } | ItemResult> {
  const { userId, anonymousId } = prepared.user;
  if (userId === undefined || anonymousId === undefined) return {};
  // Derived from the anonymous id too: one trackID (an Idempotency-Key reused for another merge)
  // can never give two different merges the same event id.
  const proposedId = derivedEventId(trackId, `ProfilesMerged\n${anonymousId}`);
  const claim = await deps.identities.claim(ctx.accountId, anonymousId, userId, proposedId);
  if (!claim.ok) {
    return rejected(`anonymousId '${anonymousId}' is already merged into userId '${claim.mergedInto}' and cannot be merged into '${userId}'`, 'merge_conflict');
  }
  return {
    event: {
      id: claim.mergeEventId,
      stream: streams.user(ctx.accountId, userId),
      type: 'ProfilesMerged',
      data: { userId, anonymousId },
      metadata: metadataFor(ctx, trackId),
    },
  };
}
