import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  DeadlineExceededError,
  EventStoreDBClient,
  UnknownError,
  WrongExpectedVersionError,
  isCommandError,
  jsonEvent,
  type AllStreamResolvedEvent,
  type ResolvedEvent,
} from '@eventstore/db-client';
import { EsdbTestServer } from '../testing/esdb-test-server.js';
import { until } from './support/eventually.js';

/**
 * The ways the EventStoreDB test double fails like the server (docs/eventstoredb.md, The test
 * double), each seen through the real client.
 */
function event(type: string, n = 0) {
  return jsonEvent({ id: randomUUID(), type, data: { n } });
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

async function idsOf(client: EventStoreDBClient, stream: string): Promise<string[]> {
  return (await collect(client.readStream(stream))).map((resolved: ResolvedEvent) => resolved.event?.id ?? '');
}

const failureOf = (work: Promise<unknown>): Promise<unknown> => work.then(() => null, (error: unknown) => error);

describe('EsdbTestServer: failures as the server has them (int)', () => {
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

  describe('repeats with expected revision any, recognised through the recent-id cache', () => {
    it('all ids remembered: a success with the original positions, nothing stored', async () => {
      const events = [event('A'), event('B')];
      const first = await client.appendToStream('s-1', events);
      await client.appendToStream('s-1', event('C'));
      const repeat = await client.appendToStream('s-1', events);
      expect(repeat).to.deep.equal(first);
      expect(server.size).to.equal(3);
    });

    it('no id remembered (a restart, an election): the write is stored again', async () => {
      const events = [event('A'), event('B')];
      await client.appendToStream('s-2', events);
      server.forgetRecentIds();
      const again = await client.appendToStream('s-2', events);
      expect(again.nextExpectedRevision).to.equal(3n);
      expect(await idsOf(client, 's-2')).to.deep.equal([...events, ...events].map((e) => e.id));
    });

    it('the first id remembered, a later one not: WrongExpectedVersion, nothing stored', async () => {
      const events = [event('A'), event('B'), event('C')];
      await client.appendToStream('s-3', events);
      server.forgetRecentIds([events[2]?.id ?? '']);
      const failure = await failureOf(client.appendToStream('s-3', events));
      expect(failure).to.be.instanceOf(WrongExpectedVersionError);
      expect((failure as WrongExpectedVersionError).expectedVersion).to.equal('any');
      expect(server.size).to.equal(3);
      // Written one at a time, each is recognised whole or stored again.
      for (const e of events) await client.appendToStream('s-3', e);
      expect(await idsOf(client, 's-3')).to.deep.equal([...events, events[2]].map((e) => e?.id));
    });

    it('is bounded in bytes: the oldest ids drop out first', async () => {
      // An entry costs 28 bytes and its stream name: room for three of these.
      server.recentIds.maxBytes = 3 * (28 + 's-4'.length);
      const old = event('Old');
      await client.appendToStream('s-4', old);
      await client.appendToStream('s-4', [event('N1'), event('N2')]);
      expect(server.recentIds.has(old.id)).to.equal(true);
      await client.appendToStream('s-4', event('N3'));
      expect(server.recentIds.has(old.id)).to.equal(false);
      await client.appendToStream('s-4', old);
      expect(await idsOf(client, 's-4')).to.have.length(5);
    });
  });

  it('refuses writes as not ready or too busy: an error of code 0 the client reports as unknown', async () => {
    for (const reason of ['not-ready', 'too-busy', 'no-leader-info'] as const) {
      server.refuseWrites = reason;
      const failure = await failureOf(client.appendToStream('s-5', event('Refused')));
      expect(failure, reason).to.be.instanceOf(UnknownError);
      expect((failure as Error).message, reason).to.contain(reason === 'not-ready' ? 'Server Is Not Ready' : reason === 'too-busy' ? 'Server Is Busy' : 'No leader info');
    }
    expect(server.size).to.equal(0);
    server.refuseWrites = null;
    await client.appendToStream('s-5', event('Taken'));
    expect(server.size).to.equal(1);
  });

  it('answers a write Timeout and commits it afterwards; its repeat is then recognised', async () => {
    server.timeOutWrites = { commitAfterMs: 20 };
    const events = [event('Late'), event('Later')];
    const failure = await failureOf(client.appendToStream('s-6', events));
    expect(failure).to.be.instanceOf(DeadlineExceededError);
    await until(() => server.size === 2, 5_000, () => `the server holds ${server.size} events, not 2`);
    server.timeOutWrites = null;
    const repeat = await client.appendToStream('s-6', events);
    expect(repeat.nextExpectedRevision).to.equal(1n);
    expect(await idsOf(client, 's-6')).to.deep.equal(events.map((e) => e.id));
  });

  it('serves gossip: a discovering client finds the node, and fails to discover it during an election', async () => {
    const discovering = EventStoreDBClient.connectionString(server.discoverConnectionString);
    try {
      await discovering.appendToStream('s-7', event('Found'));
      expect(server.gossipReads).to.be.above(0);
      expect(server.size).to.equal(1);
    } finally {
      await discovering.dispose();
    }

    server.gossip = 'electing';
    const electing = EventStoreDBClient.connectionString(server.discoverConnectionString);
    try {
      const failure = await failureOf(electing.appendToStream('s-7', event('Lost')));
      expect(failure).to.be.instanceOf(Error).and.have.property('message').that.matches(/Failed to discover/);
      expect(isCommandError(failure as Error)).to.equal(false);
      // The server is back, and reads recover; this client's appends do not: it keeps the failed
      // server-features lookup (what the adapter replaces its client for).
      server.gossip = 'leader';
      expect(await idsOf(electing, 's-7')).to.have.length(1);
      const still = await failureOf(electing.appendToStream('s-7', event('StillLost')));
      expect(still).to.be.instanceOf(Error).and.have.property('message').that.matches(/Failed to discover/);
    } finally {
      await electing.dispose();
    }

    server.gossip = 'unreachable';
    const unreachable = EventStoreDBClient.connectionString(server.discoverConnectionString);
    try {
      const failure = await failureOf(unreachable.appendToStream('s-7', event('Lost')));
      expect(failure).to.be.instanceOf(Error).and.have.property('message').that.matches(/Failed to discover/);
    } finally {
      await unreachable.dispose();
    }
    expect(server.size).to.equal(1);
  });

  it('without "caught up" messages (a server before 24.2): history, then live events, and no caughtUp', async () => {
    server.caughtUpMessages = false;
    await client.appendToStream('s-8', [event('X', 1), event('X', 2)]);
    const seen: (number | 'caughtUp')[] = [];
    const subscription = client.subscribeToAll({ fromPosition: 'start' });
    subscription.on('data', (resolved: AllStreamResolvedEvent) => {
      if (resolved.event?.streamId === 's-8') seen.push((resolved.event.data as { n: number }).n);
    });
    subscription.on('caughtUp', () => seen.push('caughtUp'));
    await until(() => seen.length === 2, 5_000, () => `seen ${JSON.stringify(seen)}, not 2 events`);
    await client.appendToStream('s-8', event('X', 3));
    await until(() => seen.length === 3, 5_000, () => `seen ${JSON.stringify(seen)}, not 3 events`);
    expect(seen).to.deep.equal([1, 2, 3]);
    await subscription.unsubscribe();
  });
});
