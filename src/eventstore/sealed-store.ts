import { fromStored, type AccountRefs } from './events.js';
import type { OpeningKey, PersonKeys, SealingKey } from './person-keys.js';
import { accountsOf, asStoreUnavailable, defaultPageBytes, type AccountsScan, AppendedEvent, Backlog, BacklogQuery, EventStore, NewEvent, ReadAllResult, ReadFilter, RecordedEvent } from './port.js';
import { isSealedBox, open, personOf, seal, sealErased, unsealedData } from './sealing.js';

/** The most a page asked of the store is scaled down by what pages opened to. */
const maxOpenedPerStoredByte = 16;

/**
 * The event store as every part of the service sees it: the personal fields of each event that
 * names a person are sealed with the person's key on the way in and opened on the way out
 * (sealing.ts), whichever store keeps them. An event whose key was erased reads with those fields
 * empty and `erased` set.
 */
export class SealedEventStore implements EventStore {
  readonly mayRepeatEventIds?: boolean;

  constructor(
    private readonly inner: EventStore,
    private readonly keys: PersonKeys,
    private readonly pseudonyms: { of(accountId: string): Promise<AccountRefs> },
    private readonly options: { seal?: boolean } = {},
  ) {
    if (inner.mayRepeatEventIds !== undefined) this.mayRepeatEventIds = inner.mayRepeatEventIds;
  }

  async append(events: NewEvent[]): Promise<AppendedEvent[]> {
    return this.inner.append(this.options.seal === false ? events.map(withoutKeyId) : await this.sealAll(events));
  }

  /**
   * What the last page read weighed opened, for each byte it was stored in (at least 1): a page is
   * asked of the store that small in stored bytes, so that it rarely opens to more than its budget.
   */
  private openedPerStoredByte = 1;

  async readAll(checkpoint: string | null, limit: number, filter?: ReadFilter): Promise<ReadAllResult> {
    const budget = filter?.maxBytes ?? defaultPageBytes;
    const stored = Math.max(1, Math.floor(budget / this.openedPerStoredByte));
    const result = await this.inner.readAll(checkpoint, limit, { ...filter, maxBytes: stored });
    const opened = await openEvents(this.keys, result.events, { budget, storedBytes: result.bytes });
    // Of the events opened only (a cut page opened some): their stored bytes taken as their share of the page's.
    const openedStored = (result.bytes * opened.events.length) / Math.max(1, result.events.length);
    // Capped: one account's very compressible events must not shrink every other reader's pages to nothing.
    if (openedStored > 0) this.openedPerStoredByte = Math.min(maxOpenedPerStoredByte, Math.max(1, (openedStored + opened.grownBytes) / openedStored));
    if (!opened.cut) return { ...result, events: opened.events, bytes: result.bytes + opened.grownBytes };
    // Opened, the page would weigh more than it may: it ends after the last event that fits, where
    // the next read resumes. (Read again up to there, a page whose stored bytes alone fill the
    // budget was cut to one event every time, each read as large as a whole page: docs/performance.md,
    // Large-event backlog.) Its weight counts the stored bytes of the events left out too.
    const last = opened.events.at(-1)?.position;
    if (last !== undefined) return { checkpoint: last, events: opened.events, bytes: result.bytes + opened.grownBytes, atEnd: false };
    // A store that gives no event its position: read again, as long as what fits.
    const fewer = await this.inner.readAll(checkpoint, opened.events.length, { ...filter, maxBytes: stored });
    const same = fewer.events.length === opened.events.length && fewer.events.every((event, i) => event.id === opened.events[i]?.id);
    const events = same ? opened : await openEvents(this.keys, fewer.events);
    return { ...fewer, events: events.events, bytes: fewer.bytes + events.grownBytes, atEnd: false };
  }

  async readStream(stream: string, fromPosition?: number, limit?: number): Promise<RecordedEvent[]> {
    return (await openEvents(this.keys, await this.inner.readStream(stream, fromPosition, limit))).events;
  }

  backlog(checkpoint: string | null, filter?: ReadFilter): Promise<Backlog> {
    return this.inner.backlog(checkpoint, filter);
  }

  backlogs(readers: readonly BacklogQuery[]): Promise<Backlog[]> {
    return this.inner.backlogs(readers);
  }

  scanAccounts(checkpoint: string | null, limit: number, options?: { withUnsettled?: boolean }): Promise<AccountsScan> {
    return this.inner.scanAccounts(checkpoint, limit, options);
  }

  comparePositions(a: string | null, b: string | null): number {
    return this.inner.comparePositions(a, b);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private async sealAll(events: NewEvent[]): Promise<NewEvent[]> {
    const [designated, refsByAccount] = await Promise.all([this.designatedKeys(events), this.refsOf(events)]);
    const refsOfEvent = (event: NewEvent): AccountRefs => refsByAccount.get(event.metadata.accountId) as AccountRefs;
    const personOfEvent = events.map((event) => (event.sealingKeyId === undefined ? personOf(event, refsOfEvent(event)) : null));
    const personsByAccount = new Map<string, string[]>();
    for (const [i, event] of events.entries()) {
      const person = personOfEvent[i];
      if (person === null || person === undefined) continue;
      const persons = personsByAccount.get(event.metadata.accountId) ?? [];
      persons.push(person);
      personsByAccount.set(event.metadata.accountId, persons);
    }
    if (personsByAccount.size === 0 && designated.size === 0) return events.map(withoutKeyId);
    let keysByAccount: Map<string, Map<string, SealingKey>>;
    try {
      keysByAccount = new Map(
        await Promise.all([...personsByAccount].map(async ([accountId, persons]) => [accountId, await this.keys.forSealing(accountId, persons)] as const)),
      );
    } catch (error) {
      // Without its keys nothing can be stored: refused as the store's own outage is (503).
      throw asStoreUnavailable(error);
    }
    return events.map((event, i) => {
      const stored = withoutKeyId(event);
      const person = personOfEvent[i];
      if (event.sealingKeyId !== undefined) {
        const opening = designated.get(event.sealingKeyId);
        // Its key erased before it came (a merge claimed before its user's erasure was done): it is erased with them.
        const key = opening && 'key' in opening && opening.accountId === event.metadata.accountId ? opening.key : null;
        const refs = refsOfEvent(event);
        return { ...stored, data: key ? seal(stored, { id: event.sealingKeyId, key }, refs) : sealErased(stored, event.sealingKeyId, refs) } as NewEvent;
      }
      const key = person === null || person === undefined ? undefined : keysByAccount.get(event.metadata.accountId)?.get(person);
      if (!key) return stored;
      // The sealed data is not of the contract's shape: it is only ever stored, and read back through openEvents.
      return { ...stored, data: seal(stored, key, refsOfEvent(event)) } as NewEvent;
    });
  }

  /** The pseudonyms of ids of each account of the events. */
  private async refsOf(events: NewEvent[]): Promise<Map<string, AccountRefs>> {
    try {
      return new Map(await Promise.all(accountsOf(events).map(async (accountId) => [accountId, await this.pseudonyms.of(accountId)] as const)));
    } catch (error) {
      throw asStoreUnavailable(error);
    }
  }

  /** The keys events must be sealed with, by id: current, or erased. */
  private async designatedKeys(events: NewEvent[]): Promise<Map<number, OpeningKey>> {
    const ids = events.flatMap((event) => (event.sealingKeyId === undefined ? [] : [event.sealingKeyId]));
    if (ids.length === 0) return new Map();
    try {
      return await this.keys.forOpening(ids);
    } catch (error) {
      throw asStoreUnavailable(error);
    }
  }
}

/** The event as stored: without the id of the key that must seal it. */
function withoutKeyId(event: NewEvent): NewEvent {
  if (event.sealingKeyId === undefined) return event;
  const stored = { ...event };
  delete stored.sealingKeyId;
  return stored;
}

/** Events opened, and how many bytes more than stored their data now weighs. */
export interface OpenedEvents {
  events: RecordedEvent[];
  grownBytes: number;
  /** true when the budget was spent before the last event: `events` holds those opened before. */
  cut: boolean;
}

/**
 * Stored events with their boxes opened, or marked erased where their key is gone. `budget`: the
 * bytes the page may weigh once opened (`storedBytes` is what it weighs as stored): deflated
 * fields can open to far more than they took, and the opening stops (past the first event) before
 * the page would pass it, so that memory stays bounded in bytes.
 */
export async function openEvents(
  keys: Pick<PersonKeys, 'forOpening'>,
  events: RecordedEvent[],
  { budget = Infinity, storedBytes = 0 }: { budget?: number; storedBytes?: number } = {},
): Promise<OpenedEvents> {
  const boxOf = (event: RecordedEvent): unknown => (event.data as Record<string, unknown>).sealed;
  const keyIds = events.flatMap((event) => {
    const box = boxOf(event);
    return isSealedBox(box) ? [box.k] : [];
  });
  if (keyIds.length === 0) return { events, grownBytes: 0, cut: false };
  const found = await keys.forOpening(keyIds);
  const opened: RecordedEvent[] = [];
  let grownBytes = 0;
  for (const event of events) {
    const box = boxOf(event);
    if (!isSealedBox(box)) {
      opened.push(event);
      continue;
    }
    const stored = event.data as Record<string, unknown>;
    const key = found.get(box.k);
    const accountId = event.metadata.accountId;
    if (key && 'key' in key && key.accountId === accountId) {
      const { fields, bytes } = open(box, key.key, accountId, event.id);
      const grown = bytes - box.b.length;
      // The store may pass its byte bound by its page's last event: what it allowed is allowed opened too,
      // or a page of events that do not grow opened would be cut at once, page after page.
      if (opened.length > 0 && storedBytes + grownBytes + grown > Math.max(budget, storedBytes)) return { events: opened, grownBytes, cut: true };
      grownBytes += grown;
      const data = fromStored({ type: event.type, data: unsealedData(event.type, stored, fields), metadata: event.metadata }).data;
      opened.push({ ...event, data } as RecordedEvent);
      continue;
    }
    const erased = key && 'erased' in key && key.accountId === accountId ? key.erased : { erasureId: null, erasedAt: null };
    const data = fromStored({ type: event.type, data: unsealedData(event.type, stored, null), metadata: event.metadata }).data;
    opened.push({ ...event, data, erased } as RecordedEvent);
  }
  return { events: opened, grownBytes, cut: false };
}
