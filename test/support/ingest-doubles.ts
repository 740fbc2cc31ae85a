import type { AccountRefs, AttributeType } from '../../src/eventstore/events.js';
import { IdRefs } from '../../src/eventstore/pseudonyms.js';
import type { AppendedEvent, NewEvent } from '../../src/eventstore/port.js';
import type { MergeClaim } from '../../src/ingest/identity-map.js';
import type { UserCommandDeps } from '../../src/ingest/users.js';
import type { IngestContext } from '../../src/ingest/request.js';
import { Validator } from '../../src/ingest/validation.js';

type RegistryPort = UserCommandDeps['registry'];
type IdentitiesPort = UserCommandDeps['identities'];

/** In-memory attribute type registry: the first claim of a key wins, as with its unique row. */
export class MemoryAttributeTypes implements RegistryPort {
  readonly types = new Map<string, Map<string, AttributeType>>();

  private of(accountId: string): Map<string, AttributeType> {
    let types = this.types.get(accountId);
    if (!types) this.types.set(accountId, (types = new Map()));
    return types;
  }

  registered(accountId: string): Promise<ReadonlyMap<string, AttributeType>> {
    return Promise.resolve(this.of(accountId));
  }

  claim(accountId: string, pending: ReadonlyMap<string, AttributeType>): Promise<ReadonlyMap<string, AttributeType>> {
    const types = this.of(accountId);
    for (const [key, type] of pending) if (!types.has(key)) types.set(key, type);
    return Promise.resolve(types);
  }

  /** A type registered meanwhile by another request. */
  registerElsewhere(accountId: string, key: string, type: AttributeType): void {
    this.of(accountId).set(key, type);
  }
}

/** In-memory identity map: one known user per anonymous id, for good. */
export class MemoryIdentities implements IdentitiesPort {
  readonly merges = new Map<string, { userId: string; eventId: string }>();

  claim(refs: AccountRefs, anonymousId: string, userId: string, proposedEventId: string): Promise<MergeClaim> {
    const key = `${refs.accountId}/${anonymousId}`;
    const fresh = !this.merges.has(key);
    const merge = this.merges.get(key) ?? { userId, eventId: proposedEventId };
    this.merges.set(key, merge);
    return Promise.resolve(merge.userId === userId ? { ok: true, mergeEventId: merge.eventId, sealingKeyId: null, profileKeyId: null, fresh } : { ok: false, mergedInto: merge.userId });
  }
}

/** Keeps the events appended, in order. */
export class MemoryAppends {
  readonly events: NewEvent[] = [];

  append(events: NewEvent[]): Promise<AppendedEvent[]> {
    this.events.push(...events);
    return Promise.resolve(events.map((e, i) => ({ id: e.id, stream: e.stream, streamPosition: i, globalPosition: this.events.length - events.length + i, duplicate: false })));
  }
}

/** Pseudonyms of ids under a fixed key per account, as the service makes them under the account's key. */
export const testRefs = (accountId: string): AccountRefs => new IdRefs(accountId, Buffer.alloc(32, accountId));

/** The pseudonyms of the doubles' accounts. */
export const testPseudonyms = { of: (accountId: string): Promise<AccountRefs> => Promise.resolve(testRefs(accountId)) };

export function userDoubles(): UserCommandDeps & { store: MemoryAppends; registry: MemoryAttributeTypes; identities: MemoryIdentities } {
  return { store: new MemoryAppends(), validator: new Validator(), registry: new MemoryAttributeTypes(), identities: new MemoryIdentities(), pseudonyms: testPseudonyms };
}

let requests = 0;

/** A request context with predictable trackIDs (UUIDs numbered by request and element). */
export function requestContext(accountId = 'acc-1', endpoint: IngestContext['endpoint'] = 'users/bulk'): IngestContext {
  requests += 1;
  const request = requests;
  const trackIds = (index: number): string => `00000000-0000-4000-8000-${String(request * 1000 + index).padStart(12, '0')}`;
  return { accountId, endpoint, receivedAt: '2024-05-01T10:00:00.000Z', trackIds };
}
