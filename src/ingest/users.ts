import { personStream, streams, type AccountRefs, type EventOf } from '../eventstore/events.js';
import type { NewEvent } from '../eventstore/port.js';
import { systemDateTimes } from '../spec/system-attributes.js';
import { classifyAttributes, type AttributeType } from './attributes.js';
import { typeConflict, type AttributeTypeRegistry, type AttributeTypes } from './attribute-registry.js';
import { accountLookups, appendDecisions, type CommandDeps, type Decision } from './decisions.js';
import { suppressedIdentity, type SuppressedSet } from './suppressed.js';
import { checkIdentities } from './identifiers.js';
import { maxMergedIdsPerUser, type IdentityMap } from './identity-map.js';
import { metadataFor, type IngestContext } from './request.js';
import { rejected, type ItemResult } from './results.js';
import { toUtcInstant } from './timestamps.js';
import { derivedEventId } from './track-ids.js';

/** A user object that passed schemas/user.json. */
interface UserItem {
  userId?: string;
  anonymousId?: string;
  attributes: Record<string, string | number | boolean>;
  [field: string]: unknown;
}

interface Prepared {
  index: number;
  user: UserItem;
  types: AttributeTypes;
  /** UTC instants of every date-time sent, by field path (`birth_date`, `attributes.last_login`). */
  instants: Record<string, string>;
}

export interface UserCommandDeps extends CommandDeps {
  registry: Pick<AttributeTypeRegistry, 'registered' | 'claim'>;
  identities: Pick<IdentityMap, 'claim'>;
}

function prepare(deps: UserCommandDeps, item: unknown, index: number, suppressed: SuppressedSet, refs: AccountRefs): Prepared | ItemResult {
  const validation = deps.validator.validate('user', item);
  if (!validation.ok) return rejected(validation.message, 'schema', validation.field);
  const user = item as UserItem;
  const ids = { userId: user.userId, anonymousId: user.anonymousId };
  const identity = checkIdentities(ids) ?? suppressedIdentity(suppressed, refs, ids);
  if (identity) return identity;
  const classified = classifyAttributes(user.attributes);
  if (typeof classified === 'string') return rejected(classified, 'datetime', 'attributes');
  const instants: Record<string, string> = {};
  for (const field of systemDateTimes) {
    const value = user[field];
    if (typeof value === 'string') instants[field] = toUtcInstant(value) as string;
  }
  for (const [key, instant] of Object.entries(classified.instants)) instants[`attributes.${key}`] = instant;
  return { index, user, types: classified.types, instants };
}

function upsertEvent(ctx: IngestContext, refs: AccountRefs, prepared: Prepared, trackId: string): NewEvent<EventOf<'UserUpserted'>> {
  const { userId, anonymousId, attributes, ...profile } = prepared.user;
  return {
    id: trackId,
    stream: personStream(refs, { userId, anonymousId }),
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

/** Whether a user is accepted as far as attribute types go; one rejected for its types gets the message naming the key and both types. */
export type Admission = { accepted: true } | { accepted: false; conflict?: string };

/**
 * Decides, in request order, which users are accepted as far as attribute types go. A user whose
 * types conflict with the registered ones, or with those of a user accepted before it in the
 * request, is rejected; otherwise `gate` (the user's remaining checks) decides. The keys first used
 * by accepted users are then claimed, with their types; a user who loses such a claim to a
 * concurrent request is rejected after all. So a rejected user never decides a type.
 */
export async function admitByTypes(
  registry: UserCommandDeps['registry'],
  accountId: string,
  users: AttributeTypes[],
  gate: (index: number) => Promise<boolean> = () => Promise.resolve(true),
): Promise<Admission[]> {
  const registered = await registry.registered(accountId, users);
  const pending = new Map<string, AttributeType>();
  const admissions: Admission[] = [];
  for (const [index, types] of users.entries()) {
    const conflict = typeConflict(types, registered, pending);
    if (conflict) admissions.push({ accepted: false, conflict });
    else if (!(await gate(index))) admissions.push({ accepted: false });
    else {
      for (const [key, type] of Object.entries(types)) if (!registered.has(key) && !pending.has(key)) pending.set(key, type);
      admissions.push({ accepted: true });
    }
  }
  const claimed = await registry.claim(accountId, pending);
  return admissions.map((admission, index) => {
    if (!admission.accepted) return admission;
    const lost = typeConflict(users[index] as AttributeTypes, claimed);
    return lost ? { accepted: false, conflict: lost } : admission;
  });
}

/**
 * Validates, checks attribute types and merges, then appends: one result per user, in order.
 * Users are checked in order; only users that pass both checks count for the types of later users
 * and have their new keys registered, so a rejected user leaves nothing behind (short of two
 * requests racing for the same new key, where the loser's merge claim stays for its retry).
 */
export async function ingestUsers(deps: UserCommandDeps, ctx: IngestContext, items: unknown[]): Promise<ItemResult[]> {
  return appendDecisions(deps.store, await decideUsers(deps, ctx, items), ctx.endpoint);
}

/** The decisions of ingestUsers, one per user in order, before anything is appended. */
export async function decideUsers(deps: UserCommandDeps, ctx: IngestContext, items: unknown[]): Promise<Decision[]> {
  const { suppressed, refs } = await accountLookups(deps, ctx.accountId);
  const outcomes: (Prepared | ItemResult)[] = items.map((item, index) => prepare(deps, item, index, suppressed, refs));
  const trackIds = items.map((_, index) => ctx.trackIds(index));
  const candidates = outcomes.filter((o): o is Prepared => 'user' in o);
  const merges = new Map<number, { event: NewEvent; fresh: boolean; profileKeyId: number | null }>();
  const admissions = await admitByTypes(
    deps.registry,
    ctx.accountId,
    candidates.map((c) => c.types),
    async (i) => {
      const candidate = candidates[i] as Prepared;
      const merge = await claimMerge(deps, ctx, refs, candidate, trackIds[candidate.index] as string);
      if ('status' in merge) outcomes[candidate.index] = merge;
      else if (merge.event) merges.set(candidate.index, { event: merge.event, fresh: merge.fresh === true, profileKeyId: merge.profileKeyId ?? null });
      return !('status' in merge);
    },
  );
  candidates.forEach((candidate, i) => {
    const admission = admissions[i];
    if (admission && !admission.accepted && admission.conflict) outcomes[candidate.index] = rejected(admission.conflict, 'attribute_type', 'attributes');
  });

  return outcomes.map((outcome, index) => {
    if (!('user' in outcome)) return outcome;
    const trackId = trackIds[index] as string;
    const merge = merges.get(index);
    if (!merge) return { trackId, events: [upsertEvent(ctx, refs, outcome, trackId)] };
    // The profile that makes the merge is sealed with the user's key found by the claim: a claim
    // before the user's erasure is done has it erased with them, however late it is appended. One
    // that repeats a merge is the person's as they are now (a browser identifying again after its
    // user was erased: the user met again).
    const keyed = merge.fresh && merge.profileKeyId !== null ? { sealingKeyId: merge.profileKeyId } : {};
    return { trackId, events: [{ ...upsertEvent(ctx, refs, outcome, trackId), ...keyed }, merge.event] };
  });
}

/** With both ids, claims the merge and makes its event; a merge into another user is a rejection. */
async function claimMerge(
  deps: UserCommandDeps,
  ctx: IngestContext,
  refs: AccountRefs,
  prepared: Prepared,
  trackId: string,
): Promise<{ event?: NewEvent<EventOf<'ProfilesMerged'>>; fresh?: boolean; profileKeyId?: number | null } | ItemResult> {
  const { userId, anonymousId } = prepared.user;
  if (userId === undefined || anonymousId === undefined) return {};
  // Derived from the anonymous id too (its pseudonym: an event id is never deleted): one trackID
  // (an Idempotency-Key reused for another merge) can never give two merges the same event id.
  const proposedId = derivedEventId(trackId, `ProfilesMerged\n${refs.anonymous(anonymousId)}`);
  const claim = await deps.identities.claim(refs, anonymousId, userId, proposedId);
  if ('full' in claim) {
    return rejected(`userId '${userId}' has ${maxMergedIdsPerUser.toLocaleString('en')} anonymousIds merged into it, as many as a user may take: anonymousId '${anonymousId}' cannot be merged into it`, 'merge_limit', 'anonymousId');
  }
  if (!claim.ok) {
    const into = claim.mergedInto === null ? 'another userId' : `userId '${claim.mergedInto}'`;
    return rejected(`anonymousId '${anonymousId}' is already merged into ${into} and cannot be merged into '${userId}'`, 'merge_conflict', 'anonymousId');
  }
  return {
    fresh: claim.fresh,
    profileKeyId: claim.profileKeyId,
    event: {
      id: claim.mergeEventId,
      stream: streams.user(ctx.accountId, refs.user(userId)),
      type: 'ProfilesMerged',
      data: { userId, anonymousId },
      metadata: metadataFor(ctx, trackId),
      ...(claim.sealingKeyId !== null && { sealingKeyId: claim.sealingKeyId }),
    },
  };
}
