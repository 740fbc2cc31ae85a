/**
 * EsdbTestServer: a TEST DOUBLE of an EventStoreDB server, for tests and the bench only.
 *
 * It keeps an in-memory log and speaks the real EventStoreDB gRPC protocol (the service definitions
 * shipped in `@eventstore/db-client/generated`), so the real `@eventstore/db-client` talks to it over
 * a real gRPC connection: `EventStoreDBClient.connectionString(server.connectionString)`.
 *
 * Implemented: ServerFeatures.GetSupportedMethods; Streams.BatchAppend and Streams.Append (expected
 * revision any / no_stream / stream_exists / exact, repeated writes recognised as the server does:
 * esdb-log.ts); Streams.Read of a stream and of `$all` (forwards / backwards, count) and
 * subscriptions to `$all` (optionally filtered, with checkpoints: esdb-reads.ts); Gossip.Read
 * (esdb-gossip.ts). Not implemented: stream subscriptions, delete/tombstone, links, stream
 * metadata, ACLs, persistent subscriptions, projections.
 *
 * It fails like the server, each way switchable per test (docs/eventstoredb.md, The test double):
 * `refuseWrites` (not ready, too busy), `timeOutWrites` (Timeout, and the write commits after),
 * `gossip` (discovery fails, then recovers), `caughtUpMessages` (false: a server before 24.2), and
 * the bounded cache of recent event ids behind repeats with expected revision `any` (`recentIds`,
 * `forgetRecentIds()`: esdb-recent-ids.ts).
 */
import grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import googleEmptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import serverFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import gossipGrpc from '@eventstore/db-client/generated/gossip_grpc_pb.js';
import type { IStreamsServer } from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type { IServerFeaturesServer } from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import { gossipService, type GossipState } from './esdb-gossip.js';
import { EventLog, type WriteOutcome } from './esdb-log.js';
import { appendUnary } from './esdb-append.js';
import {
  UNAVAILABLE,
  errorStatus,
  expectedOf,
  refusalStatus,
  streamIdentifier,
  streamName,
  timeoutStatus,
  toProposed,
  uuidToString,
  type Expected,
  type Proposed,
  type WriteRefusal,
} from './esdb-protocol.js';
import { read, type AllSubscription } from './esdb-reads.js';
import type { RecentIds } from './esdb-recent-ids.js';
import { appendSize, defaultMaxAppendSize, maxAppendSizeError, maxAppendSizeStatus } from './esdb-append-size.js';

const { BatchAppendResp } = streamsPb;

export type { WriteRefusal } from './esdb-protocol.js';

const SERVER_VERSION = '24.10.0-testdouble';

export class EsdbTestServer {
  /** gRPC calls received per append method (the client multiplexes its appends on one BatchAppend call). */
  readonly calls = { batchAppend: 0, append: 0 };
  /** Gossip reads received (discovery). */
  gossipReads = 0;
  /**
   * Bytes one write may hold, as the server's MaxAppendSize (1 MiB by default): a write whose events
   * weigh more is refused whole (esdb-append-size.ts). null: no limit.
   */
  maxAppendSize: number | null = defaultMaxAppendSize;
  /** BatchAppend writes refused (a code-0 status) while set. */
  refuseWrites: WriteRefusal | null = null;
  /**
   * While set, BatchAppend writes are answered Timeout at once and committed `commitAfterMs` later,
   * as the server's write that outlives its prepare/commit timeout (2 s by default) can still commit.
   */
  timeOutWrites: { commitAfterMs: number } | null = null;
  /** What Gossip.Read answers (esdb-gossip.ts). */
  gossip: GossipState = 'leader';
  /** false: subscriptions send no "caught up" message, as servers before 24.2 (AllSubscriptionFiltered.cs). */
  caughtUpMessages = true;
  /** The node's id in gossip. */
  readonly instanceId = randomUUID();

  private readonly log: EventLog;
  private readonly subscriptions = new Set<AllSubscription>();
  /** How to end each open call when the store goes down. */
  private readonly openCalls = new Set<() => void>();
  /** Writes answered Timeout that are still to commit. */
  private readonly lateCommits = new Set<NodeJS.Timeout>();
  private accepting = false;
  private server: grpc.Server | undefined;
  private closed = false;

  private constructor(private listenPort: number) {
    this.log = new EventLog(() => {
      for (const subscription of this.subscriptions) subscription.pump();
    });
  }

  /** Starts on 127.0.0.1, on `port` or a free one. */
  static async start(options: { port?: number } = {}): Promise<EsdbTestServer> {
    const server = new EsdbTestServer(options.port ?? 0);
    await server.listen();
    return server;
  }

  /** The port listened on; it stays the same across stop() and restart(). */
  get port(): number {
    return this.listenPort;
  }

  /** esdb://127.0.0.1:<port>?tls=false */
  get connectionString(): string {
    return `esdb://127.0.0.1:${this.port}?tls=false`;
  }

  /**
   * The node found through gossip, as a cluster's clients find its leader; a failed discovery gives
   * up after 2 attempts 100 ms apart (the client's defaults: 10 attempts, gossip timeout 5 s).
   */
  get discoverConnectionString(): string {
    return `esdb+discover://127.0.0.1:${this.port}?tls=false&maxDiscoverAttempts=2&discoveryInterval=100&gossipTimeout=1`;
  }

  /** Number of events in the log (user events only). */
  get size(): number {
    return this.log.size;
  }

  /** Every stored byte of the log's events as text: stream names, data and metadata, to search for what must not be kept. */
  storedText(): string {
    return this.log.events
      .map((event) => `${event.stream}\n${Buffer.from(event.data).toString('utf8')}\n${Buffer.from(event.customMetadata).toString('utf8')}`)
      .join('\n');
  }

  /**
   * true (default): repeated writes are recognised as the server does (esdb-log.ts). false: ids are
   * not checked, every write is stored (as a repeat the server no longer remembers).
   */
  get deduplicate(): boolean {
    return this.log.deduplicate;
  }

  set deduplicate(on: boolean) {
    this.log.deduplicate = on;
  }

  /** The recent-id cache; its `maxBytes` is switchable (8 MiB, as the server's). */
  get recentIds(): RecentIds {
    return this.log.recentIds;
  }

  /** The node forgetting recent event ids: all of them (a restart, an election), or the ones given (evicted). */
  forgetRecentIds(ids?: readonly string[]): void {
    this.log.recentIds.forget(ids);
  }

  /** The store going down: stops listening and ends every open call. Keeps the log and the recent ids. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.accepting = false;
    for (const fail of this.openCalls) fail();
    this.openCalls.clear();
    this.subscriptions.clear();
    if (!server) return;
    // A graceful shutdown first, so that the UNAVAILABLE statuses reach the clients; then cut what is left.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 250);
      server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    server.forceShutdown();
  }

  /** The store coming back: listens again on the same port with the same log. */
  async restart(): Promise<void> {
    if (this.closed) throw new Error('EsdbTestServer is closed');
    if (!this.server) await this.listen();
  }

  /** Stops for good. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.lateCommits) clearTimeout(timer);
    this.lateCommits.clear();
    await this.stop();
  }

  private async listen(): Promise<void> {
    const server = new grpc.Server();
    server.addService(serverFeaturesGrpc.ServerFeaturesService, this.serverFeatures());
    server.addService(streamsGrpc.StreamsService, this.streamsService());
    server.addService(gossipGrpc.GossipService, gossipService(this));
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${this.listenPort}`, grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    this.listenPort = port;
    this.server = server;
    this.accepting = true;
  }

  /** Registers an open call to be ended by `fail` when the store goes down; false (and failed) when it is down. */
  private track(call: NodeJS.EventEmitter, fail: () => void): boolean {
    if (!this.accepting) {
      fail();
      return false;
    }
    this.openCalls.add(fail);
    const done = (): void => void this.openCalls.delete(fail);
    call.once('cancelled', done);
    call.once('close', done);
    return true;
  }

  private serverFeatures(): IServerFeaturesServer {
    return {
      getSupportedMethods: (_call, callback) => {
        // The client looks features up by `/${service}/${method}` lower-cased.
        const methods = ['read', 'append', 'batchappend'].map((method) =>
          new serverFeaturesPb.SupportedMethod().setServiceName('event_store.client.streams.streams').setMethodName(method),
        );
        callback(null, new serverFeaturesPb.SupportedMethods().setMethodsList(methods).setEventStoreServerVersion(SERVER_VERSION));
      },
    };
  }

  private streamsService(): IStreamsServer {
    const unimplemented = (name: string) => (_call: unknown, callback: grpc.sendUnaryData<never>) =>
      callback({ code: grpc.status.UNIMPLEMENTED, details: `${name} is not implemented by the test double` });
    return {
      read: (call) =>
        read({ log: this.log, subscriptions: this.subscriptions, track: (c, fail) => this.track(c, fail), caughtUpMessages: () => this.caughtUpMessages }, call),
      append: (call, callback) => {
        this.calls.append += 1;
        appendUnary(
          {
            write: (stream, events, expected) => this.write(stream, events, expected),
            tooLarge: (events) => (this.maxAppendSize !== null && appendSize(events) > this.maxAppendSize ? maxAppendSizeError(this.maxAppendSize) : null),
            track: (c, fail) => this.track(c, fail),
            forget: (fail) => void this.openCalls.delete(fail),
          },
          call,
          callback,
        );
      },
      batchAppend: (call) => {
        this.calls.batchAppend += 1;
        this.batchAppend(call);
      },
      delete: unimplemented('Delete'),
      tombstone: unimplemented('Tombstone'),
    };
  }

  // ---- writes -------------------------------------------------------------------------------

  private write(stream: string, events: readonly Proposed[], expected: Expected = 'any'): WriteOutcome {
    return this.log.write(stream, events, expected);
  }

  /** Many appends multiplexed on one call by correlation id; each may span several messages up to `is_final`. */
  private batchAppend(
    call: grpc.ServerDuplexStream<InstanceType<typeof streamsPb.BatchAppendReq>, InstanceType<typeof BatchAppendResp>>,
  ): void {
    interface Pending {
      stream: string;
      expected: Expected;
      deadline: Date | undefined;
      events: Proposed[];
    }
    const pending = new Map<string, Pending>();
    if (!this.track(call, () => call.emit('error', UNAVAILABLE))) return;
    call.on('data', (request: InstanceType<typeof streamsPb.BatchAppendReq>) => {
      const response = new BatchAppendResp().setCorrelationId(request.getCorrelationId());
      let stream = '';
      let correlationId = '';
      try {
        correlationId = uuidToString(request.getCorrelationId());
        const options = request.getOptions();
        if (options) {
          pending.set(correlationId, {
            stream: streamName(options.getStreamIdentifier()),
            expected: expectedOf(options, options.hasStreamPosition() ? options.getStreamPosition() : null),
            deadline: options.getDeadline()?.toDate(),
            events: [],
          });
        }
        const write = pending.get(correlationId);
        if (!write) return;
        stream = write.stream;
        write.events.push(...request.getProposedMessagesList().map(toProposed));
        if (this.maxAppendSize !== null && appendSize(write.events) > this.maxAppendSize) {
          // Refused once past the limit, before its final message: the later ones are ignored.
          pending.delete(correlationId);
          call.write(response.setStreamIdentifier(streamIdentifier(stream)).setError(maxAppendSizeStatus(this.maxAppendSize)));
          return;
        }
        if (!request.getIsFinal()) return;
        pending.delete(correlationId);
        response.setStreamIdentifier(streamIdentifier(stream));
        if (write.deadline && write.deadline.getTime() < Date.now()) {
          response.setError(timeoutStatus());
        } else if (this.refuseWrites) {
          response.setError(refusalStatus(this.refuseWrites));
        } else if (this.timeOutWrites) {
          this.commitLater(write, this.timeOutWrites.commitAfterMs);
          response.setError(timeoutStatus());
        } else {
          this.batchOutcome(response, write.expected, this.write(stream, write.events, write.expected));
        }
      } catch (error) {
        pending.delete(correlationId);
        const message = error instanceof Error ? error.message : String(error);
        response.setStreamIdentifier(streamIdentifier(stream));
        response.setError(errorStatus(grpc.status.INVALID_ARGUMENT, 'BadRequest', new sharedPb.BadRequest().setMessage(message), 'event_store.client.BadRequest'));
      }
      call.write(response);
    });
    call.on('error', () => undefined);
    call.on('end', () => call.end());
  }

  private batchOutcome(response: InstanceType<typeof BatchAppendResp>, expected: Expected, outcome: WriteOutcome): void {
    const empty = (): InstanceType<typeof googleEmptyPb.Empty> => new googleEmptyPb.Empty();
    if (outcome.ok) {
      const success = new BatchAppendResp.Success();
      if (outcome.revision === null) success.setNoStream(empty());
      else success.setCurrentRevision(outcome.revision.toString());
      if (outcome.position === null) success.setNoPosition(empty());
      // One position for the write, reported as both parts.
      else success.setPosition(new sharedPb.AllStreamPosition().setCommitPosition(`${outcome.position}`).setPreparePosition(`${outcome.position}`));
      response.setSuccess(success);
      return;
    }
    const wrong = new sharedPb.WrongExpectedVersion();
    if (outcome.current === null) wrong.setCurrentNoStream(empty());
    else wrong.setCurrentStreamRevision(outcome.current.toString());
    if (typeof expected === 'bigint') wrong.setExpectedStreamPosition(expected.toString());
    else if (expected === 'no_stream') wrong.setExpectedNoStream(empty());
    else if (expected === 'stream_exists') wrong.setExpectedStreamExists(empty());
    else wrong.setExpectedAny(empty());
    response.setError(errorStatus(grpc.status.ALREADY_EXISTS, 'WrongExpectedVersion', wrong, 'event_store.client.WrongExpectedVersion'));
  }

  /** A write the server answered Timeout, committing after all. */
  private commitLater(write: { stream: string; expected: Expected; events: Proposed[] }, ms: number): void {
    const timer = setTimeout(() => {
      this.lateCommits.delete(timer);
      this.write(write.stream, write.events, write.expected);
    }, ms);
    this.lateCommits.add(timer);
  }
}
