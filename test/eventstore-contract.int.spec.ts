import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { StoreUnavailableError, type EventStore, type EventType, type NewEvent, type RecordedEvent } from '../src/eventstore/port.js';
import { esdbKind, postgresKind, type StoreKind, type StoreUnderTest } from './support/event-stores.js';
import { eventually, sleep, until } from './support/eventually.js';

/**
 * The contract of the EventStore port, held by both adapters. Streams are new in every test and
 * only their events are looked at, so the suite also runs on a shared real server.
 */
function event(stream: string, type: EventType = 'EventTracked', id: string = randomUUID(), data: Record<string, unknown> = { n: id, nested: { list: [1, 'two', { three: true }] } }): NewEvent {
  // The store carries data without looking at it: these events need not have their type's shape.
  const opaque = { id, stream, type, data, metadata: { trackId: id, accountId: 'acc-contract', receivedAt: new Date().toISOString(), schemaVersion: 1 } };
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

/** Reads on from `checkpoint` until `count` events of `streams` have come, or `timeoutMs` passes. */
async function catchUp(
  store: EventStore,
  checkpoint: string | null,
  streams: Set<string>,
  count: number,
  { limit = 100, timeoutMs = 10_000 } = {},
): Promise<{ events: RecordedEvent[]; checkpoint: string | null }> {
  const events: RecordedEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  while (events.length < count && Date.now() < deadline) {
    const page = await store.readAll(checkpoint, limit);
    events.push(...page.events.filter((e) => streams.has(e.stream)));
    if (page.checkpoint === checkpoint) await sleep(20);
    checkpoint = page.checkpoint;
  }
  return { events, checkpoint };
}

/** Fails within the store's timeout; `unavailable`: as the 503 of an unreachable store. */
async function rejectsPromptly(work: Promise<unknown>, { unavailable = false } = {}): Promise<void> {
  const started = Date.now();
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'rejected').to.be.instanceOf(Error);
  if (unavailable) {
    // The domain error that the HTTP layer answers 503.
    expect(error).to.be.instanceOf(StoreUnavailableError);
  }
  expect(Date.now() - started, 'answered within the timeout').to.be.below(8_000);
}

function contract(kind: StoreKind): void {
  describe(`event store contract: ${kind.name} (int)`, function () {
    this.timeout(30_000);
    let subject: StoreUnderTest;
    let store: EventStore;

    beforeEach(async () => {
      subject = await kind.open();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.close();
    });

    it('appends events and reads their stream back with type, data, metadata and positions', async () => {
      const stream = `user-${randomUUID()}`;
      const [a, b] = [event(stream, 'UserUpserted'), event(stream, 'ProfilesMerged')];
      const appended = await store.append([a, b]);
      expect(appended.map((e) => [e.id, e.stream, e.streamPosition])).to.deep.equal([
        [a.id, stream, 0],
        [b.id, stream, 1],
      ]);
      const read = await store.readStream(stream);
      expect(read.map((e) => [e.id, e.type, e.stream, e.streamPosition])).to.deep.equal([
        [a.id, 'UserUpserted', stream, 0],
        [b.id, 'ProfilesMerged', stream, 1],
      ]);
      expect(read[0]?.data).to.deep.equal(a.data);
      expect(read[0]?.metadata).to.deep.equal(a.metadata);
      expect(Date.parse(read[0]?.recordedAt as string)).to.be.closeTo(Date.now(), 60_000);
      expect(read[1]?.globalPosition).to.be.greaterThan(read[0]?.globalPosition as number);
    });

    it('reads a stream from a position, up to a limit; an unknown stream is empty', async () => {
      const stream = `product-${randomUUID()}`;
      const events = Array.from({ length: 5 }, () => event(stream, 'ProductSubmitted'));
      await store.append(events);
      expect((await store.readStream(stream, 2, 2)).map((e) => e.id)).to.deep.equal([events[2]?.id, events[3]?.id]);
      expect((await store.readStream(stream, 4)).map((e) => e.streamPosition)).to.deep.equal([4]);
      expect(await store.readStream(stream, 5)).to.deep.equal([]);
      expect(await store.readStream(`user-${randomUUID()}`)).to.deep.equal([]);
    });

    it('stores a repeated event id once: appending it again is a success that adds nothing', async () => {
      const stream = `user-${randomUUID()}`;
      const first = event(stream, 'UserUpserted');
      const [original] = await store.append([first]);
      const [again] = await store.append([first]);
      expect(again).to.deep.include({ id: first.id, stream, streamPosition: original?.streamPosition });
      const next = event(stream, 'EventTracked');
      await store.append([next]);
      expect((await store.readStream(stream)).map((e) => [e.id, e.streamPosition])).to.deep.equal([
        [first.id, 0],
        [next.id, 1],
      ]);
    });

    it('keeps each stream gap-free and in append order under concurrent appends from two clients', async () => {
      const other = subject.secondClient();
      const streams = [0, 1, 2].map(() => `user-${randomUUID()}`);
      const writer = async (target: EventStore): Promise<NewEvent[]> => {
        const written: NewEvent[] = [];
        for (let round = 0; round < 15; round += 1) {
          // One append at a time per stream and client: each resolves before the next begins.
          const batch = streams.map((stream) => event(stream));
          await Promise.all(batch.map((e) => target.append([e])));
          written.push(...batch);
        }
        return written;
      };
      const writers = await Promise.all([writer(store), writer(other)]);
      for (const stream of streams) {
        const read = await store.readStream(stream);
        expect(read.map((e) => e.streamPosition)).to.deep.equal([...Array(30).keys()]);
        const position = new Map(read.map((e) => [e.id, e.streamPosition]));
        for (const written of writers) {
          const positions = written.filter((e) => e.stream === stream).map((e) => position.get(e.id) as number);
          expect(positions, `one client's appends on ${stream}, in order`).to.deep.equal([...positions].sort((x, y) => x - y));
        }
      }
    });

    it('catch-up: reads every event once, in append order, from a checkpoint on, and filters by type', async () => {
      const start = await head(store);
      const streams = [`user-${randomUUID()}`, `product-${randomUUID()}`];
      const written: NewEvent[] = [];
      for (let i = 0; i < 12; i += 1) {
        const e = i % 3 === 0 ? event(streams[1] as string, 'ProductEventTracked') : event(streams[0] as string, 'UserUpserted');
        written.push(e);
        await store.append([e]);
      }
      const all = await catchUp(store, start, new Set(streams), written.length, { limit: 5 });
      expect(all.events.map((e) => e.id)).to.deep.equal(written.map((e) => e.id));
      expect(all.events[0]?.data).to.deep.equal(written[0]?.data);

      // From a checkpoint in the middle: the rest, and nothing read before it.
      const firstPage = await catchUp(store, start, new Set(streams), 4, { limit: 4 });
      const rest = await catchUp(store, firstPage.checkpoint, new Set(streams), written.length - firstPage.events.length);
      expect([...firstPage.events, ...rest.events].map((e) => e.id)).to.deep.equal(written.map((e) => e.id));

      const products = await store.readAll(start, 1_000, { types: ['ProductEventTracked'] });
      const ours = products.events.filter((e) => streams.includes(e.stream));
      expect(ours.map((e) => e.id)).to.deep.equal(written.filter((e) => e.type === 'ProductEventTracked').map((e) => e.id));

      // Caught up: nothing new, and the checkpoint stays where it is.
      const end = await head(store);
      const none = await store.readAll(end, 100);
      expect(none.events).to.deep.equal([]);
      expect(none.checkpoint).to.equal(end);
    });

    it('catch-up: a reader that has caught up receives what is appended later, also from another client', async () => {
      const start = await head(store);
      const stream = `user-${randomUUID()}`;
      const other = subject.secondClient();
      const first = event(stream);
      await store.append([first]);
      const early = await catchUp(store, start, new Set([stream]), 1);
      expect(early.events.map((e) => e.id)).to.deep.equal([first.id]);
      const later = [event(stream), event(stream)];
      await other.append([later[0] as NewEvent]);
      await store.append([later[1] as NewEvent]);
      const next = await catchUp(store, early.checkpoint, new Set([stream]), 2);
      expect(next.events.map((e) => e.id)).to.deep.equal(later.map((e) => e.id));
    });

    it('catch-up: two readers reading from one checkpoint at once each get every event', async () => {
      const start = await head(store);
      const stream = `user-${randomUUID()}`;
      const written = Array.from({ length: 6 }, () => event(stream));
      for (const e of written) await store.append([e]);
      // A client that has not read yet: its first reads wait for the store, and so overlap.
      const reader = subject.secondClient();
      const read = () => catchUp(reader, start, new Set([stream]), 6, { limit: 2 });
      const [one, two] = await Promise.all([read(), read()]);
      expect(one.events.map((e) => e.id)).to.deep.equal(written.map((e) => e.id));
      expect(two.events.map((e) => e.id)).to.deep.equal(written.map((e) => e.id));
    });

    it('catch-up: a page takes events while the data of those before stays under maxBytes, and at least one', async () => {
      const start = await head(store);
      const stream = `user-${randomUUID()}`;
      const written = Array.from({ length: 5 }, () => event(stream, 'EventTracked', randomUUID(), { blob: 'x'.repeat(100_000) }));
      for (const e of written) await store.append([e]);
      /** The first page after `checkpoint` that has events (a subscription may deliver them a little later). */
      const pageAfter = (checkpoint: string | null, maxBytes: number): Promise<{ ids: string[]; bytes: number; checkpoint: string | null }> =>
        eventually(
          async () => {
            const page = await store.readAll(checkpoint, 100, { maxBytes });
            const ids = page.events.filter((e) => e.stream === stream).map((e) => e.id);
            if (ids.length) return { ids, bytes: page.bytes, checkpoint: page.checkpoint };
            checkpoint = page.checkpoint;
            return undefined;
          },
          2_000,
          () => `no page after ${checkpoint} with events of ${stream}`,
        );
      const ids = written.map((e) => e.id);
      const first = await pageAfter(start, 250_000);
      expect(first.ids).to.deep.equal(ids.slice(0, 3));
      expect(first.bytes).to.be.within(300_000, 300_100);
      const second = await pageAfter(first.checkpoint, 250_000);
      expect(second.ids).to.deep.equal(ids.slice(3));
      // A single event larger than the bound still comes: a reader always moves on.
      const one = await pageAfter(start, 1);
      expect(one.ids).to.deep.equal(ids.slice(0, 1));
    });

    it('counts the backlog after a checkpoint', async () => {
      const start = await head(store);
      const stream = `user-${randomUUID()}`;
      await store.append([event(stream, 'UserUpserted'), event(stream, 'EventTracked'), event(stream, 'EventTracked')]);
      const backlog = await store.backlog(start, { types: ['EventTracked'] });
      expect(backlog.events).to.be.at.least(2);
      expect(Date.parse(backlog.oldestRecordedAt as string)).to.be.closeTo(Date.now(), 60_000);
      const end = await head(store);
      expect((await store.backlog(end)).events).to.equal(0);
    });

    it('when the store cannot be reached: appends fail as unavailable (503), reads and ping fail, all promptly', async () => {
      const unreachable = await kind.unreachable();
      try {
        await rejectsPromptly(unreachable.store.append([event(`user-${randomUUID()}`)]), { unavailable: true });
        await rejectsPromptly(unreachable.store.ping());
        await rejectsPromptly(unreachable.store.readStream(`user-${randomUUID()}`));
      } finally {
        await unreachable.close();
      }
    });

    it('when the store goes away and comes back: unavailable meanwhile, then appends and catch-up go on', async function () {
      if (!subject.outage) this.skip();
      const outage = subject.outage as NonNullable<StoreUnderTest['outage']>;
      const start = await head(store);
      const stream = `user-${randomUUID()}`;
      const before = event(stream);
      await store.append([before]);
      const seen = await catchUp(store, start, new Set([stream]), 1);

      await outage.down();
      await rejectsPromptly(store.append([event(stream)]), { unavailable: true });
      await rejectsPromptly(store.ping());
      await outage.up();

      const after = event(stream);
      // Appended again every 100 ms while it fails.
      let failure: unknown;
      await until(
        () =>
          store.append([after]).then(
            () => true,
            (error: unknown) => {
              failure = error;
              return false;
            },
          ),
        10_000,
        () => `the append after the outage still fails: ${String(failure)}`,
        100,
      );
      await store.ping();
      const next = await catchUp(store, seen.checkpoint, new Set([stream]), 1);
      expect(next.events.map((e) => e.id)).to.deep.equal([after.id]);
      expect((await store.readStream(stream)).map((e) => e.id)).to.deep.equal([before.id, after.id]);
    });
  });
}

contract(postgresKind);
contract(esdbKind);
