import { fromStored } from './events.js';
import type { PersonKeys, SealingKey } from './person-keys.js';
import { asStoreUnavailable, type AccountsScan, AppendedEvent, Backlog, BacklogQuery, EventStore, NewEvent, ReadAllResult, ReadFilter, RecordedEvent } from './port.js';
import { isSealedBox, open, personOf, seal, unsealedData } from './sealing.js';

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
  ) {
    if (inner.mayRepeatEventIds !== undefined) this.mayRepeatEventIds = inner.mayRepeatEventIds;
  }

  async append(events: NewEvent[]): Promise<AppendedEvent[]> {
    return this.inner.append(await this.sealAll(events));
  }

  async readAll(checkpoint: string | null, limit: number, filter?: ReadFilter): Promise<ReadAllResult> {
    const result = await this.inner.readAll(checkpoint, limit, filter);
    return { ...result, events: await this.openAll(result.events) };
  }

  async readStream(stream: string, fromPosition?: number, limit?: number): Promise<RecordedEvent[]> {
    return this.openAll(await this.inner.readStream(stream, fromPosition, limit));
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
    const personsByAccount = new Map<string, string[]>();
    for (const event of events) {
      const person = personOf(event);
      if (person === null) continue;
      const persons = personsByAccount.get(event.metadata.accountId) ?? [];
      persons.push(person);
      personsByAccount.set(event.metadata.accountId, persons);
    }
    if (personsByAccount.size === 0) return events;
    let keysByAccount: Map<string, Map<string, SealingKey>>;
    try {
      keysByAccount = new Map(
        await Promise.all([...personsByAccount].map(async ([accountId, persons]) => [accountId, await this.keys.forSealing(accountId, persons)] as const)),
      );
    } catch (error) {
      // Without its keys nothing can be stored: refused as the store's own outage is (503).
      throw asStoreUnavailable(error);
    }
    return events.map((event) => {
      const person = personOf(event);
      const key = person === null ? undefined : keysByAccount.get(event.metadata.accountId)?.get(person);
      if (!key) return event;
      // The sealed data is not of the contract's shape: it is only ever stored, and read back through openAll.
      return { ...event, data: seal(event, key) } as NewEvent;
    });
  }

  private openAll(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    return openEvents(this.keys, events);
  }
}

/** Stored events with their boxes opened, or marked erased where their key is gone. */
export async function openEvents(keys: Pick<PersonKeys, 'forOpening'>, events: RecordedEvent[]): Promise<RecordedEvent[]> {
  const boxOf = (event: RecordedEvent): unknown => (event.data as Record<string, unknown>).sealed;
  const keyIds = events.flatMap((event) => {
    const box = boxOf(event);
    return isSealedBox(box) ? [box.k] : [];
  });
  if (keyIds.length === 0) return events;
  const found = await keys.forOpening(keyIds);
  return events.map((event) => {
    const box = boxOf(event);
    if (!isSealedBox(box)) return event;
    const stored = event.data as Record<string, unknown>;
    const key = found.get(box.k);
    const accountId = event.metadata.accountId;
    if (key && 'key' in key && key.accountId === accountId) {
      const opened = fromStored({ type: event.type, data: unsealedData(event.type, stored, open(box, key.key, accountId, event.id)), metadata: event.metadata });
      return { ...event, data: opened.data } as RecordedEvent;
    }
    const erased = key && 'erased' in key && key.accountId === accountId ? key.erased : { erasureId: null, erasedAt: null };
    const shown = fromStored({ type: event.type, data: unsealedData(event.type, stored, null), metadata: event.metadata });
    return { ...event, data: shown.data, erased } as RecordedEvent;
  });
}
