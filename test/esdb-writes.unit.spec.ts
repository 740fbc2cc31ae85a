import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { eventWriteBytes, planWrites } from '../src/eventstore/esdb-writes.js';
import type { NewEvent } from '../src/eventstore/port.js';
import { EventsTooLargeError } from '../src/eventstore/too-large.js';
import { appendSize } from '../testing/esdb-append-size.js';
import { opaqueEvent } from './support/opaque-events.js';

/** An event of `stream` whose data holds `filler` characters, of the item `trackId` (its own by default). */
function sized(stream: string, filler: number, trackId?: string): NewEvent {
  const event = opaqueEvent(stream);
  const data: Record<string, unknown> = { blob: 'x'.repeat(filler) };
  return { ...event, data, metadata: { ...event.metadata, trackId: trackId ?? event.id } } as NewEvent;
}

/** What the test double (as the server) counts for the event the client sends: JSON text of data and metadata. */
const serverSize = (event: NewEvent): number =>
  appendSize([{ type: event.type, data: Buffer.from(JSON.stringify(event.data)), customMetadata: Buffer.from(JSON.stringify(event.metadata)) }]);

const ids = (events: readonly NewEvent[]): string[] => events.map((e) => e.id);

describe('EventStoreDB writes under the size limit (unit)', () => {
  it('measures an event at least as the server does, within 16 bytes, counting UTF-8 bytes', () => {
    for (const text of ['', 'plain', 'é'.repeat(1000), '😀'.repeat(500), '\u0001"\\']) {
      const data: Record<string, unknown> = { text, n: 1.5e300 };
      const event = { ...sized('s', 0), data } as NewEvent;
      const bytes = eventWriteBytes(event);
      expect(bytes).to.be.at.least(serverSize(event)).and.at.most(serverSize(event) + 16);
    }
  });

  it('writes each stream in one write, streams in the order of their first event, when all fits', () => {
    const [a1, b1, a2, c1] = [sized('a', 10), sized('b', 10), sized('a', 10), sized('c', 10)] as NewEvent[];
    const writes = planWrites([a1, b1, a2, c1] as NewEvent[], 1024 * 1024);
    expect(writes.map((w) => [w.stream, ids(w.events)])).to.deep.equal([
      ['a', ids([a1, a2] as NewEvent[])],
      ['b', ids([b1] as NewEvent[])],
      ['c', ids([c1] as NewEvent[])],
    ]);
    expect(writes.map((w) => w.bytes)).to.deep.equal([eventWriteBytes(a1 as NewEvent) + eventWriteBytes(a2 as NewEvent), eventWriteBytes(b1 as NewEvent), eventWriteBytes(c1 as NewEvent)]);
  });

  it('cuts a stream whose events pass the limit into consecutive writes, each as full as the limit allows, in order', () => {
    const events = Array.from({ length: 10 }, () => sized('a', 300));
    const each = eventWriteBytes(events[0] as NewEvent);
    const limit = 3 * each + 1;
    const writes = planWrites([...events, sized('b', 10)], limit);
    expect(writes.map((w) => [w.stream, w.events.length])).to.deep.equal([['a', 3], ['a', 3], ['a', 3], ['a', 1], ['b', 1]]);
    expect(writes.flatMap((w) => (w.stream === 'a' ? ids(w.events) : []))).to.deep.equal(ids(events));
    for (const write of writes) expect(write.bytes).to.be.at.most(limit);
  });

  it('fills a write up to exactly the limit (the server refuses only more)', () => {
    const events = [sized('a', 100), sized('a', 100)];
    const exact = eventWriteBytes(events[0] as NewEvent) + eventWriteBytes(events[1] as NewEvent);
    expect(planWrites(events, exact)).to.have.length(1);
    expect(planWrites(events, exact - 1)).to.have.length(2);
  });

  it("keeps an item's events in a stream (an upsert and its merge) in one write", () => {
    const trackId = randomUUID();
    const first = sized('a', 100);
    const [upsert, merge] = [sized('a', 100, trackId), sized('a', 0, trackId)] as NewEvent[];
    // Room for the first two events, not for the third: the merge moves with its upsert.
    const limit = eventWriteBytes(first) + eventWriteBytes(upsert as NewEvent);
    const writes = planWrites([first, upsert, merge] as NewEvent[], limit + 1);
    expect(writes.map((w) => ids(w.events))).to.deep.equal([[first.id], ids([upsert, merge] as NewEvent[])]);
  });

  it('refuses an item whose events alone pass the limit, naming its trackID, size and the limit, whatever came before', () => {
    const trackId = randomUUID();
    const big = [sized('b', 600, trackId), sized('b', 600, trackId)];
    const bytes = eventWriteBytes(big[0] as NewEvent) + eventWriteBytes(big[1] as NewEvent);
    const before = [sized('a', 10), sized('a', 10)];
    let thrown: unknown;
    try {
      planWrites([...before, ...big, sized('c', 10)], bytes - 1);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).to.be.instanceOf(EventsTooLargeError);
    expect(thrown).to.deep.include({ trackId, bytes, maxBytes: bytes - 1 });
  });
});
