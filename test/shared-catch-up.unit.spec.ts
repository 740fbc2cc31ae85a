import { expect } from 'chai';
import type { ReadAllResult, ReadFilter, RecordedEvent } from '../src/eventstore/port.js';
import { SharedCatchUp, type CatchUpSource } from '../projections/runner/shared-catch-up.js';

/** An event of `accountId` at `position`, as a store would return it. */
function event(accountId: string, position: number, type: RecordedEvent['type'] = 'UserUpserted'): RecordedEvent {
  return {
    type,
    data: { userId: `u-${position}`, profile: {}, attributes: {}, attributeTypes: {}, instants: {} },
    id: `00000000-0000-4000-8000-${String(position).padStart(12, '0')}`,
    stream: `user-${accountId}-u-${position}`,
    streamPosition: 0,
    globalPosition: position,
    metadata: { trackId: 't', accountId, receivedAt: '2026-01-01T00:00:00.000Z', schemaVersion: 1 },
    recordedAt: '2026-01-01T00:00:00.000Z',
  } as RecordedEvent;
}

/** A store of events in memory that counts its reads: what a worker's reads reach. */
class CountingStore implements CatchUpSource {
  reads = 0;
  constructor(private readonly events: RecordedEvent[]) {}

  readAll(checkpoint: string | null, limit: number, filter: ReadFilter = {}): Promise<ReadAllResult> {
    this.reads += 1;
    const from = checkpoint === null ? 0 : Number(checkpoint);
    const page = this.events.filter((e) => e.globalPosition > from && (filter.accountId === undefined || e.metadata.accountId === filter.accountId)).slice(0, limit);
    const last = page.at(-1);
    return Promise.resolve({ events: page, checkpoint: last ? String(last.globalPosition) : checkpoint, bytes: 0 });
  }

  backlog(): ReturnType<CatchUpSource['backlog']> {
    return Promise.resolve({ events: 0, oldestRecordedAt: null });
  }
}

describe('shared catch-up reads of a worker (unit)', () => {
  const events = [event('acme', 1), event('globex', 2), event('acme', 3, 'EventTracked'), event('globex', 4)];

  it("gives each account its own events: two accounts read from the same position never share a page", async () => {
    const store = new CountingStore(events);
    const shared = new SharedCatchUp(store);
    const [acme, globex] = await Promise.all([shared.readAll(null, 10, { accountId: 'acme' }), shared.readAll(null, 10, { accountId: 'globex' })]);
    expect(acme.events.map((e) => e.globalPosition)).to.deep.equal([1, 3]);
    expect(globex.events.map((e) => e.globalPosition)).to.deep.equal([2, 4]);
    expect(store.reads).to.equal(2);
  });

  it('reads once for the projections of one account at one position, each getting its own event types', async () => {
    const store = new CountingStore(events);
    const shared = new SharedCatchUp(store);
    const [leads, userEvents] = await Promise.all([
      shared.readAll(null, 10, { accountId: 'acme', types: ['UserUpserted'] }),
      shared.readAll(null, 10, { accountId: 'acme', types: ['EventTracked'] }),
    ]);
    expect(store.reads).to.equal(1);
    expect(leads.events.map((e) => e.globalPosition)).to.deep.equal([1]);
    expect(userEvents.events.map((e) => e.globalPosition)).to.deep.equal([3]);
    expect(leads.checkpoint).to.equal('3');
  });
});
