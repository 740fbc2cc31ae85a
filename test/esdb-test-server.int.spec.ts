import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  EventStoreDBClient,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
  eventTypeFilter,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type Filter,
  type Position,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { EsdbTestServer } from '../testing/esdb-test-server.js';
import { until } from './support/eventually.js';

type Recorded = NonNullable<ResolvedEvent['event']>;

function event(type: string, n = 0, id: string = randomUUID()) {
  return jsonEvent({ id, type, data: { n }, metadata: { source: 'spec' } });
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

function recorded(resolved: ResolvedEvent | AllStreamResolvedEvent): Recorded {
  if (!resolved.event) throw new Error('expected an event');
  return resolved.event;
}

/** What a subscription has seen, for a failure message: the event types, and caughtUp. */
const listed = (seen: (Recorded | 'caughtUp')[]): string => seen.map((s) => (s === 'caughtUp' ? s : s.type)).join(', ') || 'nothing';

/** A subscription to $all, recording events and a "caughtUp" marker in arrival order. */
function subscribe(client: EventStoreDBClient, options: { fromPosition?: Position | 'start' | 'end'; filter?: Filter }) {
  const seen: (Recorded | 'caughtUp')[] = [];
  const subscription = client.subscribeToAll({ fromPosition: options.fromPosition ?? 'start', filter: options.filter });
  subscription.on('data', (resolved: AllStreamResolvedEvent) => seen.push(recorded(resolved)));
  subscription.on('caughtUp', () => seen.push('caughtUp'));
  const events = (): Recorded[] => seen.filter((s): s is Recorded => s !== 'caughtUp');
  return { subscription, seen, events };
}

describe('EsdbTestServer: EventStoreDB test double (int)', () => {
  let server: EsdbTestServer;
  let client: EventStoreDBClient;

  beforeEach(async () => {
    server = await EsdbTestServer.start();
    client = EventStoreDBClient.connectionString(server.connectionString);
  });
  afterEach(async () => {
    await client.dispose();
    await server.close();
  });

  it('appends JSON events and reads them back from the stream and from $all', async () => {
    const events = [event('Ordered', 1), event('Paid', 2), event('Shipped', 3)];
    const result = await client.appendToStream('order-1', events, { expectedRevision: 'no_stream' });
    expect(result.success).to.equal(true);
    expect(result.nextExpectedRevision).to.equal(2n);
    expect(server.size).to.equal(3);

    const forwards = (await collect(client.readStream('order-1'))).map(recorded);
    expect(forwards.map((e) => [e.id, e.type, e.revision, e.streamId])).to.deep.equal(
      events.map((e, i) => [e.id, e.type, BigInt(i), 'order-1']),
    );
    expect(forwards[0]?.data).to.deep.equal({ n: 1 });
    expect(forwards[0]?.metadata).to.deep.equal({ source: 'spec' });
    expect(forwards[0]?.isJson).to.equal(true);
    expect(Math.abs((forwards[0]?.created.getTime() ?? 0) - Date.now())).to.be.below(5_000);

    const backwards = (await collect(client.readStream('order-1', { fromRevision: END, direction: BACKWARDS, maxCount: 2 }))).map(recorded);
    expect(backwards.map((e) => e.revision)).to.deep.equal([2n, 1n]);
    const fromOne = (await collect(client.readStream('order-1', { fromRevision: 1n }))).map(recorded);
    expect(fromOne.map((e) => e.revision)).to.deep.equal([1n, 2n]);
    const fromOneBack = (await collect(client.readStream('order-1', { fromRevision: 1n, direction: BACKWARDS }))).map(recorded);
    expect(fromOneBack.map((e) => e.revision)).to.deep.equal([1n, 0n]);

    let notFound: unknown;
    try {
      await collect(client.readStream('order-unknown'));
    } catch (error) {
      notFound = error;
    }
    expect(notFound).to.be.instanceOf(StreamNotFoundError);

    const all = (await collect(client.readAll())).map(recorded);
    expect(all.filter((e) => e.streamId.startsWith('$')).length).to.be.greaterThan(0);
    expect(all.filter((e) => e.streamId === 'order-1').map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
    const last = (await collect(client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }))).map(recorded);
    expect(last.map((e) => e.id)).to.deep.equal([events[2]?.id]);
  });

  it('rejects a write whose expected revision does not match', async () => {
    await client.appendToStream('order-2', event('Ordered'), { expectedRevision: 'no_stream' });
    const attempts: [string, Parameters<EventStoreDBClient['appendToStream']>[2]][] = [
      ['order-2', { expectedRevision: 5n }],
      ['order-2', { expectedRevision: 'no_stream' }],
      ['order-none', { expectedRevision: 'stream_exists' }],
    ];
    const errors: unknown[] = [];
    for (const [stream, options] of attempts) {
      errors.push(await client.appendToStream(stream, event('Paid'), options).catch((error: unknown) => error));
    }
    expect(errors.map((e) => e instanceof WrongExpectedVersionError)).to.deep.equal([true, true, true]);
    const first = errors[0] as WrongExpectedVersionError;
    expect([first.streamName, first.expectedVersion, first.actualVersion]).to.deep.equal(['order-2', 5n, 0n]);
    expect((errors[2] as WrongExpectedVersionError).actualVersion).to.equal('no_stream');
    expect(server.size).to.equal(1);

    const exact = await client.appendToStream('order-2', event('Paid'), { expectedRevision: 0n });
    expect(exact.nextExpectedRevision).to.equal(1n);
  });

  it('treats a repeat of the same write as idempotent, and appends it again with deduplicate off', async () => {
    const events = [event('Ordered'), event('Paid')];
    const first = await client.appendToStream('order-3', events, { expectedRevision: 'no_stream' });
    const repeat = await client.appendToStream('order-3', events, { expectedRevision: 'no_stream' });
    expect(repeat).to.deep.equal(first);
    const repeatAny = await client.appendToStream('order-3', events);
    expect(repeatAny).to.deep.equal(first);
    expect(server.size).to.equal(2);

    // Event ids are per stream: the same ids on another stream are other events.
    await client.appendToStream('order-4', events);
    expect(server.size).to.equal(4);

    server.deduplicate = false;
    const copy = await client.appendToStream('order-3', events);
    expect(copy.nextExpectedRevision).to.equal(3n);
    expect(server.size).to.equal(6);
    const ids = (await collect(client.readStream('order-3'))).map((e) => recorded(e).id);
    expect(ids).to.deep.equal([...events, ...events].map((e) => e.id));
  });

  it('serves the unary Append too (the client uses it when credentials are given)', async () => {
    // Insecure connections ignore credentials, but giving them makes the client use Append, not BatchAppend.
    const credentials = { username: 'admin', password: 'changeit' };
    const events = [event('Ordered'), event('Paid')];
    const first = await client.appendToStream('order-u', events, { expectedRevision: 'no_stream', credentials });
    expect(first.nextExpectedRevision).to.equal(1n);
    expect(await client.appendToStream('order-u', events, { expectedRevision: 'no_stream', credentials })).to.deep.equal(first);
    const conflict = await client
      .appendToStream('order-u', event('Late'), { expectedRevision: 0n, credentials })
      .catch((error: unknown) => error);
    expect(conflict).to.be.instanceOf(WrongExpectedVersionError);
    expect([(conflict as WrongExpectedVersionError).expectedVersion, (conflict as WrongExpectedVersionError).actualVersion]).to.deep.equal([0n, 1n]);
    const read = (await collect(client.readStream('order-u'))).map(recorded);
    expect(read.map((e) => e.id)).to.deep.equal(events.map((e) => e.id));
    expect(read[1]?.position).to.deep.equal(first.position);
  });

  it('gives each event of a write its own position, commit = prepare, increasing in $all', async () => {
    const one = await client.appendToStream('order-5', [event('A'), event('B'), event('C')]);
    const two = await client.appendToStream('order-6', event('D'));
    const all = (await collect(client.readAll())).map(recorded);
    const prepares = all.map((e) => e.position?.prepare ?? -1n);
    expect(prepares.every((p, i) => i === 0 || p > (prepares[i - 1] ?? 0n))).to.equal(true);
    expect(all.every((e) => e.position?.commit === e.position?.prepare)).to.equal(true);

    // The write's one position is that of its last event.
    const write = all.filter((e) => e.streamId === 'order-5');
    expect(one.position).to.deep.equal(write[2]?.position);
    const d = all.find((e) => e.streamId === 'order-6');
    expect(d?.position).to.deep.equal(two.position);

    // readAll from a position includes the event at that position.
    const fromB = (await collect(client.readAll({ fromPosition: write[1]?.position, maxCount: 2 }))).map(recorded);
    expect(fromB.map((e) => e.type)).to.deep.equal(['B', 'C']);
  });

  it('subscribes to $all with an event-type filter: history, caughtUp, then live events', async () => {
    await client.appendToStream('order-7', [event('Wanted', 1), event('Other', 2), event('Wanted', 3)]);
    const { subscription, seen, events } = subscribe(client, { filter: eventTypeFilter({ prefixes: ['Wanted'] }) });
    await until(() => seen.includes('caughtUp'), 1_500, () => `seen ${listed(seen)}, no caughtUp`);
    await client.appendToStream('order-8', [event('Other', 4), event('Wanted', 5)]);
    await client.appendToStream('order-9', event('Wanted', 6));
    await until(() => events().length === 4, 1_500, () => `seen ${listed(seen)}, not 4 events`);
    expect(seen.map((s) => (s === 'caughtUp' ? s : (s.data as { n: number }).n))).to.deep.equal([1, 3, 'caughtUp', 5, 6]);
    await subscription.unsubscribe();
  });

  it('subscribes to $all from a position, excluding the event at that position', async () => {
    await client.appendToStream('order-10', [event('X', 1), event('X', 2), event('X', 3)]);
    const [, second] = (await collect(client.readAll())).map(recorded).filter((e) => e.streamId === 'order-10');
    const { subscription, seen } = subscribe(client, {
      fromPosition: second?.position,
      filter: streamNameFilter({ regex: '^order-' }),
    });
    await until(() => seen.includes('caughtUp'), 1_500, () => `seen ${listed(seen)}, no caughtUp`);
    await client.appendToStream('order-11', event('X', 4));
    await until(() => seen.length === 3, 1_500, () => `seen ${listed(seen)}, not 3 in all`);
    expect(seen.map((s) => (s === 'caughtUp' ? s : (s.data as { n: number }).n))).to.deep.equal([3, 'caughtUp', 4]);
    await subscription.unsubscribe();
  });

  it('sends checkpoints on a filtered subscription', async () => {
    await client.appendToStream('noise', Array.from({ length: 40 }, (_, n) => event('Noise', n)));
    await client.appendToStream('order-12', event('Wanted'));
    const checkpoints: Position[] = [];
    const filter = eventTypeFilter({
      prefixes: ['Wanted'],
      maxSearchWindow: 10,
      checkpointInterval: 1,
      checkpointReached: (_subscription, position) => {
        checkpoints.push(position);
      },
    });
    const { subscription, seen, events } = subscribe(client, { filter });
    await until(() => seen.includes('caughtUp'), 1_500, () => `seen ${listed(seen)}, no caughtUp`);
    // 3 system events + 41 appended, a checkpoint every 10 looked at, and one on catching up.
    expect(checkpoints.length).to.equal(5);
    const log = (await collect(client.readAll())).map(recorded);
    expect(checkpoints.map((c) => c.prepare)).to.deep.equal([9, 19, 29, 39, 43].map((i) => log[i]?.position?.prepare));
    expect(events().map((e) => e.type)).to.deep.equal(['Wanted']);
    await subscription.unsubscribe();
  });

  it('is unavailable while stopped and serves the same log after a restart', async () => {
    await client.appendToStream('order-13', event('Before'));
    const { subscription } = subscribe(client, {});
    const dropped = new Promise<unknown>((resolve) => subscription.on('error', resolve));
    await server.stop();
    expect(await dropped).to.be.instanceOf(UnavailableError);

    const failure = await client
      .appendToStream('order-13', event('During'), { deadline: 1_500 })
      .catch((error: unknown) => error);
    expect(failure).to.be.instanceOf(Error);

    await server.restart();
    const after = await client.appendToStream('order-13', event('After'), { deadline: 1_500 });
    expect(after.nextExpectedRevision).to.equal(1n);
    const types = (await collect(client.readStream('order-13'))).map((e) => recorded(e).type);
    expect(types).to.deep.equal(['Before', 'After']);
  });
});
