import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { streams } from '../src/eventstore/events.js';
import type { EventStore, EventType, NewEvent, ReadFilter, RecordedEvent } from '../src/eventstore/port.js';
import { esdbKind, postgresKind, type StoreKind, type StoreUnderTest } from './support/event-stores.js';
import { sleep } from './support/eventually.js';

/**
 * The parts of the EventStore port that projections partitioned by account rely on, held by both
 * adapters: a catch-up read and a backlog of one account's events only, the accounts met in a
 * stretch of the store with a position before each one's first event, and the order of
 * checkpoints. Accounts are new in every test, so the suite also runs on a shared real server.
 */

function event(accountId: string, stream: string, type: EventType = 'EventTracked'): NewEvent {
  const id = randomUUID();
  const data: Record<string, unknown> = { n: id };
  // The store carries data without looking at it: these events need not have their type's shape.
  const opaque = { id, stream, type, data, metadata: { trackId: id, accountId, receivedAt: new Date().toISOString(), schemaVersion: 1 } };
  return opaque as NewEvent;
}

/** The checkpoint at the head of the store: everything stored so far has been read. */
async function head(store: EventStore): Promise<string | null> {
  let checkpoint: string | null = null;
  for (;;) {
    const page = await store.readAll(checkpoint, 5_000);
    if (page.checkpoint === checkpoint) return checkpoint;
    checkpoint = page.checkpoint;
  }
}

/** Reads on from `checkpoint` with `filter` until `count` events have come (or 10 s pass). */
async function catchUp(store: EventStore, checkpoint: string | null, count: number, filter: ReadFilter, limit = 100): Promise<{ events: RecordedEvent[]; checkpoint: string | null }> {
  const events: RecordedEvent[] = [];
  const deadline = Date.now() + 10_000;
  while (events.length < count && Date.now() < deadline) {
    const page = await store.readAll(checkpoint, limit, filter);
    events.push(...page.events);
    if (page.checkpoint === checkpoint) await sleep(20);
    checkpoint = page.checkpoint;
  }
  return { events, checkpoint };
}

function contract(kind: StoreKind): void {
  describe(`event store contract, accounts: ${kind.name} (int)`, function () {
    this.timeout(30_000);
    let subject: StoreUnderTest;
    let store: EventStore;
    let start: string | null;
    const [a, b] = [randomUUID(), randomUUID()];
    /** Events of two accounts, interleaved, on each kind of stream of an account. */
    let written: NewEvent[];
    const of = (accountId: string): string[] => written.filter((e) => e.metadata.accountId === accountId).map((e) => e.id);

    beforeEach(async () => {
      subject = await kind.open();
      store = subject.store;
      start = await head(store);
      written = [
        event(a, streams.user(a, 'u1'), 'UserUpserted'),
        event(b, streams.user(b, 'u1')),
        event(a, streams.product(a, 'p1'), 'ProductEventTracked'),
        event(b, streams.product(b, 'p1'), 'ProductSubmitted'),
        event(a, streams.anonymous(a, 'x1')),
        event(a, streams.user(a, 'u1')),
      ];
      for (const e of written) await store.append([e]);
    });
    afterEach(async () => {
      await subject.close();
    });

    it('readAll with accountId: only that account\'s events, in order, page by page; what comes later comes next', async () => {
      const ofA = await catchUp(store, start, 4, { accountId: a }, 2);
      expect(ofA.events.map((e) => e.id)).to.deep.equal(of(a));
      expect(new Set(ofA.events.map((e) => e.metadata.accountId))).to.deep.equal(new Set([a]));
      const ofB = await catchUp(store, start, 2, { accountId: b });
      expect(ofB.events.map((e) => e.id)).to.deep.equal(of(b));

      // Caught up: nothing more, the checkpoint unchanged; a later event of the account comes next.
      const none = await store.readAll(ofA.checkpoint, 100, { accountId: a });
      expect(none.events).to.deep.equal([]);
      expect(none.checkpoint).to.equal(ofA.checkpoint);
      const later = event(a, streams.product(a, 'p2'), 'ProductSubmitted');
      await store.append([event(b, streams.user(b, 'u2')), later]);
      const next = await catchUp(store, ofA.checkpoint, 1, { accountId: a });
      expect(next.events.map((e) => e.id)).to.deep.equal([later.id]);

      // With types as well: both filters apply.
      const products = await catchUp(store, start, 2, { accountId: a, types: ['ProductEventTracked', 'ProductSubmitted'] });
      expect(products.events.map((e) => e.id)).to.deep.equal([written[2]?.id, later.id]);
    });

    it('backlog with accountId: that account\'s events after a checkpoint, none once they are read', async () => {
      expect((await store.backlog(start, { accountId: a })).events).to.equal(4);
      expect((await store.backlog(start, { accountId: b })).events).to.equal(2);
      expect((await store.backlog(start, { accountId: a, types: ['EventTracked'] })).events).to.equal(2);
      expect((await store.backlog(start, { accountId: randomUUID() })).events, 'an account without events').to.equal(0);
      const ofA = await catchUp(store, start, 4, { accountId: a });
      expect((await store.backlog(ofA.checkpoint, { accountId: a })).events).to.equal(0);
    });

    it('backlogs of several readers at once: each what its own backlog is', async () => {
      const ofA = await store.readAll(start, 2, { accountId: a });
      // A reader at the start of the store, and the last one further on: the one read must start at the start.
      const readers = [
        { checkpoint: null, filter: { accountId: a } },
        { checkpoint: ofA.checkpoint, filter: { accountId: b } },
        { checkpoint: start, filter: { accountId: b } },
        { checkpoint: ofA.checkpoint, filter: { accountId: a } },
        { checkpoint: start, filter: { accountId: a, types: ['EventTracked' as const] } },
        { checkpoint: start, filter: { accountId: randomUUID() } },
        { checkpoint: ofA.checkpoint, filter: { accountId: a } },
      ];
      const together = await store.backlogs(readers);
      const alone = await Promise.all(readers.map((r) => store.backlog(r.checkpoint, r.filter)));
      expect(together.map((b) => b.events)).to.deep.equal([4, 1, 2, 2, 2, 0, 2]);
      expect(together.map((b) => b.events)).to.deep.equal(alone.map((b) => b.events));
      expect(together.map((b) => b.oldestRecordedAt)).to.deep.equal(alone.map((b) => b.oldestRecordedAt));
    });

    it('scanAccounts: each account once, in the order first met, with a position from which its reader misses none of its events', async () => {
      const met = new Map<string, string | null>();
      let checkpoint = start;
      const deadline = Date.now() + 10_000;
      while (!(met.has(a) && met.has(b)) && Date.now() < deadline) {
        const scan = await store.scanAccounts(checkpoint, 2);
        for (const account of scan.accounts) if (!met.has(account.accountId)) met.set(account.accountId, account.before);
        if (scan.checkpoint === checkpoint) await sleep(20);
        else expect(store.comparePositions(scan.checkpoint, checkpoint), 'each scan after the last').to.be.above(0);
        checkpoint = scan.checkpoint;
      }
      expect([...met.keys()].filter((id) => id === a || id === b)).to.deep.equal([a, b]);
      for (const account of [a, b]) {
        const read = await catchUp(store, met.get(account) ?? null, of(account).length, { accountId: account });
        expect(read.events.map((e) => e.id), `events of ${account} from its position`).to.deep.equal(of(account));
      }
      // The position of the second account lies after the first account's first event.
      expect(store.comparePositions(met.get(b) ?? null, met.get(a) ?? null)).to.be.above(0);
    });

    it('comparePositions orders checkpoints as the store does; null is the start', async () => {
      const checkpoints: string[] = [];
      let checkpoint = start;
      while (checkpoints.length < 3) {
        const page = await catchUp(store, checkpoint, 1, { accountId: a }, 1);
        checkpoint = page.checkpoint;
        checkpoints.push(checkpoint as string);
      }
      const [c1, c2, c3] = checkpoints as [string, string, string];
      expect(store.comparePositions(c1, c2)).to.be.below(0);
      expect(store.comparePositions(c2, c1)).to.be.above(0);
      expect(store.comparePositions(c1, c3)).to.be.below(0);
      expect(store.comparePositions(c2, c2)).to.equal(0);
      expect(store.comparePositions(null, c1)).to.be.below(0);
      expect(store.comparePositions(c1, null)).to.be.above(0);
      expect(store.comparePositions(null, null)).to.equal(0);
      // A checkpoint of an unfiltered read at the head is after every one of them.
      const end = await head(store);
      expect(store.comparePositions(c3, end)).to.be.below(0);
    });
  });
}

contract(postgresKind);
contract(esdbKind);
