import type { NewEvent } from '../eventstore/port.js';
import { classifyAttributes, type AttributeType } from './attributes.js';
import type { AttributeTypeRegistry } from './attribute-registry.js';
import { appendDecisions, metadataFor, rejected, type CommandDeps, type Decision, type IngestContext, type ItemResult } from './context.js';
import { identityProblem, streams } from './identifiers.js';
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
  for (const field of ['userId', 'anonymousId'] as const) {
    const id = user[field];
    const problem = id === undefined ? null : identityProblem(field, id);
    if (problem) return rejected(problem, 'identity');
  }
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

/** Validates, checks attribute types and merges, then appends: one result per user, in order. */
export async function ingestUsers(deps: UserCommandDeps, ctx: IngestContext, items: unknown[]): Promise<ItemResult[]> {
  const prepared = items.map((item, index) => prepare(deps, item, index));
  const valid = prepared.filter((p): p is Prepared => 'user' in p);
  const typeChecks = await deps.registry.check(
    ctx.accountId,
    valid.map((p) => p.types),
  );
  const conflicts = new Map(valid.map((p, i) => [p.index, typeChecks[i] ?? null]));

  const decisions: Decision[] = [];
  for (const [index, item] of prepared.entries()) {
    if (!('user' in item)) {
      decisions.push(item);
      continue;
    }
    const conflict = conflicts.get(index);
    if (conflict) {
      decisions.push(rejected(conflict, 'attribute_type'));
      continue;
    }
    decisions.push(await decide(deps, ctx, item));
  }
  return appendDecisions(deps.store, decisions);
}

async function decide(deps: UserCommandDeps, ctx: IngestContext, prepared: Prepared): Promise<Decision> {
  const trackId = ctx.trackIds(prepared.index);
  const events = [upsertEvent(ctx, prepared, trackId)];
  const { userId, anonymousId } = prepared.user;
  if (userId !== undefined && anonymousId !== undefined) {
    const claim = await deps.identities.claim(ctx.accountId, anonymousId, userId, derivedEventId(trackId, 'ProfilesMerged'));
    if (!claim.ok) {
      return rejected(`anonymousId '${anonymousId}' is already merged into userId '${claim.mergedInto}' and cannot be merged into '${userId}'`, 'merge_conflict');
    }
    events.push({
      id: claim.mergeEventId,
      stream: streams.user(ctx.accountId, userId),
      type: 'ProfilesMerged',
      data: { userId, anonymousId },
      metadata: metadataFor(ctx, trackId),
    });
  }
  return { events, trackId };
}
