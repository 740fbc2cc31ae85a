/**
 * EsdbTestServer: a TEST DOUBLE of an EventStoreDB server, for tests and the bench only.
 *
 * It keeps an in-memory log and speaks the real EventStoreDB gRPC protocol (the service definitions
 * shipped in `@eventstore/db-client/generated`), so the real `@eventstore/db-client` talks to it over
 * a real gRPC connection: `EventStoreDBClient.connectionString(server.connectionString)`.
 *
 * Implemented: ServerFeatures.GetSupportedMethods; Streams.BatchAppend and Streams.Append (expected
 * revision any / no_stream / stream_exists / exact, idempotent repeats by event id); Streams.Read of
 * a stream and of `$all` (forwards / backwards, count) and subscriptions to `$all` (optionally
 * filtered, with checkpoints). Not implemented: stream subscriptions, delete/tombstone, links,
 * stream metadata, ACLs, persistent subscriptions, projections, gossip.
 */
import grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import googleEmptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';
import serverFeaturesPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import serverFeaturesGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import type { IStreamsServer } from '@eventstore/db-client/generated/streams_grpc_pb.js';
import type { IServerFeaturesServer } from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import { appendSize, defaultMaxAppendSize, maxAppendSizeError, maxAppendSizeStatus } from './esdb-append-size.js';

const { ReadReq, ReadResp, AppendResp, BatchAppendResp } = streamsPb;
type ReadReqOptions = InstanceType<typeof ReadReq.Options>;
type ReadRespMsg = InstanceType<typeof ReadResp>;
type ProposedMessage = InstanceType<typeof streamsPb.AppendReq.ProposedMessage | typeof streamsPb.BatchAppendReq.ProposedMessage>;
type StatusMsg = InstanceType<typeof statusPb.Status>;

const SERVER_VERSION = '24.10.0-testdouble';
/** A filtered subscription checkpoints every multiplier × search window events looked at; the window defaults to 32. */
const DEFAULT_SEARCH_WINDOW = 32;
const TICKS_PER_MS = 10_000n;
/** What a client sees of calls open when the store goes down, as with a connection lost. */
const UNAVAILABLE: grpc.StatusObject = {
  code: grpc.status.UNAVAILABLE,
  details: 'the EventStoreDB test double went down',
  metadata: new grpc.Metadata(),
};
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Proposed {
  readonly id: string;
  readonly type: string;
  readonly isJson: boolean;
  readonly data: Uint8Array;
  readonly customMetadata: Uint8Array;
}

interface LoggedEvent extends Proposed {
  readonly stream: string;
  readonly revision: number;
  /** .NET ticks (100 ns) since the Unix epoch, as the real server's `created`. */
  readonly created: bigint;
  readonly commit: bigint;
  readonly prepare: bigint;
}

type Expected = 'any' | 'no_stream' | 'stream_exists' | bigint;
type WriteOutcome =
  | { readonly ok: true; readonly revision: number | null; readonly commit: bigint | null }
  | { readonly ok: false; readonly current: number | null };

interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

class ProtocolError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

const isSystemStream = (stream: string): boolean => stream.startsWith('$');
const comparePosition = (a: Position, b: Position): number =>
  a.commit === b.commit ? Number(a.prepare - b.prepare) : a.commit < b.commit ? -1 : 1;

function uuidToString(uuid: InstanceType<typeof sharedPb.UUID> | undefined): string {
  let text = '';
  if (uuid?.hasStructured()) {
    const s = uuid.getStructured();
    const hex = [s?.getMostSignificantBits(), s?.getLeastSignificantBits()]
      .map((half) => BigInt.asUintN(64, BigInt(half ?? '0')).toString(16).padStart(16, '0'))
      .join('');
    text = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  } else if (uuid?.hasString()) {
    text = uuid.getString().toLowerCase();
  }
  if (!UUID_RE.test(text)) throw new ProtocolError(grpc.status.INVALID_ARGUMENT, `invalid uuid "${text}"`);
  return text;
}

function uuidMessage(id: string, structured: boolean): InstanceType<typeof sharedPb.UUID> {
  const uuid = new sharedPb.UUID();
  if (!structured) return uuid.setString(id);
  const hex = id.replaceAll('-', '');
  const half = (part: string): string => BigInt.asIntN(64, BigInt(`0x${part}`)).toString();
  return uuid.setStructured(
    new sharedPb.UUID.Structured()
      .setMostSignificantBits(half(hex.slice(0, 16)))
      .setLeastSignificantBits(half(hex.slice(16))),
  );
}

function streamIdentifier(stream: string): InstanceType<typeof sharedPb.StreamIdentifier> {
  return new sharedPb.StreamIdentifier().setStreamName(Buffer.from(stream, 'utf8'));
}

const streamName = (identifier: InstanceType<typeof sharedPb.StreamIdentifier> | undefined): string =>
  Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');

/** The expected revision of Append (`revision`) and BatchAppend (`stream_position`) options. */
function expectedOf(options: { hasNoStream(): boolean; hasStreamExists(): boolean }, revision: string | null): Expected {
  if (revision !== null) return BigInt(revision);
  return options.hasNoStream() ? 'no_stream' : options.hasStreamExists() ? 'stream_exists' : 'any';
}

function toProposed(message: ProposedMessage): Proposed {
  const metadata = message.getMetadataMap();
  const type = metadata.get('type');
  const contentType = metadata.get('content-type');
  if (!type || !contentType) throw new ProtocolError(grpc.status.INVALID_ARGUMENT, 'type and content-type are required');
  return {
    id: uuidToString(message.getId()),
    type,
    isJson: contentType === 'application/json',
    data: message.getData_asU8().slice(),
    customMetadata: message.getCustomMetadata_asU8().slice(),
  };
}

/** A google.rpc.Status carrying an EventStore error detail, as BatchAppend replies carry them. */
function errorStatus(code: grpc.status, message: string, detail: { serializeBinary(): Uint8Array }, typeName: string): StatusMsg {
  const any = new anyPb.Any();
  any.pack(detail.serializeBinary(), `event_store.client.${typeName}`);
  return new statusPb.Status().setCode(code as number).setMessage(message).setDetails(any);
}

function allFrom(options: ReadReqOptions): Position | 'start' | 'end' {
  const all = options.getAll();
  const position = all?.getPosition();
  if (position) return { commit: BigInt(position.getCommitPosition()), prepare: BigInt(position.getPreparePosition()) };
  return all?.hasEnd() ? 'end' : 'start';
}

type EventFilter = (event: LoggedEvent) => boolean;

function toFilter(options: ReadReqOptions): { filter: EventFilter; checkpointEvery: number } | null {
  const filterOptions = options.getFilter();
  if (!options.hasFilter() || !filterOptions) return null;
  const onType = filterOptions.hasEventType();
  const expression = onType ? filterOptions.getEventType() : filterOptions.getStreamIdentifier();
  const regex = expression?.getRegex() ?? '';
  const prefixes = expression?.getPrefixList() ?? [];
  // As the real server: a non-empty regex wins over the prefix list.
  const matches: (value: string) => boolean = regex
    ? ((re: RegExp) => (value: string) => re.test(value))(new RegExp(regex))
    : (value) => prefixes.some((prefix) => value.startsWith(prefix));
  const window = filterOptions.hasMax() ? filterOptions.getMax() : DEFAULT_SEARCH_WINDOW;
  return {
    filter: (event) => matches(onType ? event.type : event.stream),
    checkpointEvery: Math.max(1, filterOptions.getCheckpointintervalmultiplier()) * Math.max(1, window),
  };
}

/** One open subscription to `$all`: a cursor into the log, so history and live events never skip or repeat. */
class AllSubscription {
  private seen = 0;
  private caughtUp = false;
  private paused = false;
  private closed = false;

  constructor(
    private readonly log: readonly LoggedEvent[],
    private readonly call: grpc.ServerWritableStream<InstanceType<typeof ReadReq>, ReadRespMsg>,
    private cursor: number,
    private readonly filter: { filter: EventFilter; checkpointEvery: number } | null,
    private readonly toResponse: (event: LoggedEvent) => ReadRespMsg,
  ) {}

  /** Sends whatever the log holds past the cursor, respecting the call's flow control. */
  pump(): void {
    while (!this.closed && !this.paused && this.cursor < this.log.length) {
      const event = this.log[this.cursor++] as LoggedEvent;
      let writable = true;
      if (!this.filter || this.filter.filter(event)) writable = this.call.write(this.toResponse(event));
      if (this.filter && ++this.seen >= this.filter.checkpointEvery) {
        this.seen = 0;
        writable = this.checkpoint(event) && writable;
      }
      if (!writable) this.waitForDrain();
    }
    if (this.closed || this.paused || this.caughtUp) return;
    this.caughtUp = true;
    const last = this.log[this.cursor - 1];
    if (this.filter && last && this.seen > 0) {
      this.seen = 0;
      this.checkpoint(last);
    }
    if (!this.call.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()))) this.waitForDrain();
  }

  close(): void {
    this.closed = true;
  }

  private checkpoint(event: LoggedEvent): boolean {
    const checkpoint = new ReadResp.Checkpoint()
      .setCommitPosition(event.commit.toString())
      .setPreparePosition(event.prepare.toString());
    return this.call.write(new ReadResp().setCheckpoint(checkpoint));
  }

  private waitForDrain(): void {
    this.paused = true;
    this.call.once('drain', () => {
      this.paused = false;
      this.pump();
    });
  }
}

export class EsdbTestServer {
  /**
   * true (default): a write whose event ids are all already the stream's is an idempotent success (as the
   * real server does for identical appends). false: ids are not checked, the events are appended again
   * (the real server only dedupes on a best-effort basis with expected revision "any").
   */
  deduplicate = true;
  /**
   * Bytes one write may hold, as the server's MaxAppendSize (1 MiB by default): a write whose events
   * weigh more is refused whole (esdb-append-size.ts). null: no limit.
   */
  maxAppendSize: number | null = defaultMaxAppendSize;
  /** gRPC calls received per append method (the client multiplexes its appends on one BatchAppend call). */
  readonly calls = { batchAppend: 0, append: 0 };

  private readonly log: LoggedEvent[] = [];
  private readonly streams = new Map<string, LoggedEvent[]>();
  private readonly subscriptions = new Set<AllSubscription>();
  /** How to end each open call when the store goes down. */
  private readonly openCalls = new Set<() => void>();
  private accepting = false;
  private nextPosition = 0n;
  private server: grpc.Server | undefined;
  private closed = false;

  private constructor(private listenPort: number) {
    // Some system events, as a fresh real node writes, so that filters have something to filter out.
    const system = (stream: string, type: string, data: object): void => {
      this.write(stream, [
        { id: randomUUID(), type, isJson: true, data: Buffer.from(JSON.stringify(data)), customMetadata: new Uint8Array() },
      ]);
    };
    system('$epochs', '$epoch-information', { epochNumber: 0, epochPosition: 0 });
    system('$$$stats-test', '$metadata', { $maxAge: 86400 });
    system('$stats-test', '$statsCollected', { 'proc-startTime': new Date().toISOString() });
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

  /** Number of events in the log (user events only). */
  get size(): number {
    return this.log.filter((event) => !isSystemStream(event.stream)).length;
  }

  /** The store going down: stops listening and ends every open call. Keeps the log. */
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
    await this.stop();
  }

  private async listen(): Promise<void> {
    const server = new grpc.Server();
    server.addService(serverFeaturesGrpc.ServerFeaturesService, this.serverFeatures());
    server.addService(streamsGrpc.StreamsService, this.streamsService());
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
      read: (call) => this.read(call),
      append: (call, callback) => {
        this.calls.append += 1;
        this.append(call, callback);
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

  /** The real server's commit check: expected revision, then (with `deduplicate`) idempotence by event id. */
  private write(stream: string, events: readonly Proposed[], expected: Expected = 'any'): WriteOutcome {
    const existing = this.streams.get(stream) ?? [];
    const current = existing.length === 0 ? null : existing.length - 1;
    const duplicate = this.deduplicate ? this.findRepeat(existing, events, expected) : undefined;
    if (duplicate) return { ok: true, revision: duplicate.revision, commit: duplicate.commit };
    const wrong =
      (expected === 'no_stream' && current !== null) ||
      (expected === 'stream_exists' && current === null) ||
      (typeof expected === 'bigint' && BigInt(current ?? -1) !== expected);
    if (wrong) return { ok: false, current };
    if (events.length === 0) return { ok: true, revision: current, commit: null };

    // One write: each event a record of its own; they all share the write's commit position.
    const commit = this.nextPosition;
    const created = BigInt(Date.now()) * TICKS_PER_MS;
    for (const event of events) {
      const prepare = this.nextPosition;
      const logged: LoggedEvent = { ...event, stream, revision: existing.length, created, commit, prepare };
      this.nextPosition += BigInt(
        96 + Buffer.byteLength(stream) + Buffer.byteLength(event.type) + event.data.length + event.customMetadata.length,
      );
      existing.push(logged);
      this.log.push(logged);
    }
    this.streams.set(stream, existing);
    for (const subscription of this.subscriptions) subscription.pump();
    return { ok: true, revision: existing.length - 1, commit };
  }

  /** The last event of an earlier identical write, where the real server would find it for this expected revision. */
  private findRepeat(existing: readonly LoggedEvent[], events: readonly Proposed[], expected: Expected): LoggedEvent | undefined {
    if (events.length === 0) return undefined;
    const matchesAt = (start: number): boolean =>
      start >= 0 && start + events.length <= existing.length && events.every((e, i) => existing[start + i]?.id === e.id);
    const starts =
      typeof expected === 'bigint'
        ? [Number(expected) + 1]
        : expected === 'no_stream'
          ? [0]
          : existing.flatMap((e, i) => (e.id === events[0]?.id ? [i] : []));
    const start = starts.find(matchesAt);
    return start === undefined ? undefined : existing[start + events.length - 1];
  }

  private append(
    call: grpc.ServerReadableStream<InstanceType<typeof streamsPb.AppendReq>, InstanceType<typeof AppendResp>>,
    callback: grpc.sendUnaryData<InstanceType<typeof AppendResp>>,
  ): void {
    let options: InstanceType<typeof streamsPb.AppendReq.Options> | undefined;
    const events: Proposed[] = [];
    let failure: ProtocolError | undefined;
    let answered = false;
    const answer: typeof callback = (error, response) => {
      this.openCalls.delete(fail);
      if (!answered) callback(error, response);
      answered = true;
    };
    const fail = (): void => answer(UNAVAILABLE);
    if (!this.track(call, fail)) return;
    call.on('data', (request: InstanceType<typeof streamsPb.AppendReq>) => {
      try {
        if (request.hasOptions()) options = request.getOptions();
        const message = request.getProposedMessage();
        if (message) events.push(toProposed(message));
      } catch (error) {
        failure ??= error instanceof ProtocolError ? error : new ProtocolError(grpc.status.INTERNAL, String(error));
      }
    });
    call.on('error', () => undefined);
    call.on('end', () => {
      if (!failure && !options?.hasStreamIdentifier()) failure = new ProtocolError(grpc.status.INVALID_ARGUMENT, 'options are required');
      if (failure || !options) return answer({ code: failure?.code, details: failure?.message });
      if (this.maxAppendSize !== null && appendSize(events) > this.maxAppendSize) return answer(maxAppendSizeError(this.maxAppendSize));
      const expected = expectedOf(options, options.hasRevision() ? options.getRevision() : null);
      const outcome = this.write(streamName(options.getStreamIdentifier()), events, expected);
      const response = new AppendResp();
      if (outcome.ok) {
        const success = new AppendResp.Success();
        if (outcome.revision === null) success.setNoStream(new sharedPb.Empty());
        else success.setCurrentRevision(outcome.revision.toString());
        if (outcome.commit === null) success.setNoPosition(new sharedPb.Empty());
        else success.setPosition(new AppendResp.Position().setCommitPosition(`${outcome.commit}`).setPreparePosition(`${outcome.commit}`));
        response.setSuccess(success);
      } else {
        const wrong = new AppendResp.WrongExpectedVersion();
        if (outcome.current === null) wrong.setCurrentNoStream(new sharedPb.Empty());
        else wrong.setCurrentRevision(outcome.current.toString());
        if (typeof expected === 'bigint') wrong.setExpectedRevision(expected.toString());
        else if (expected === 'no_stream') wrong.setExpectedNoStream(new sharedPb.Empty());
        else if (expected === 'stream_exists') wrong.setExpectedStreamExists(new sharedPb.Empty());
        else wrong.setExpectedAny(new sharedPb.Empty());
        response.setWrongExpectedVersion(wrong);
      }
      answer(null, response);
    });
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
          response.setError(errorStatus(grpc.status.DEADLINE_EXCEEDED, 'Timeout', new sharedPb.Timeout(), 'Timeout'));
        } else {
          this.batchOutcome(response, write.expected, this.write(stream, write.events, write.expected));
        }
      } catch (error) {
        pending.delete(correlationId);
        const message = error instanceof Error ? error.message : String(error);
        response.setStreamIdentifier(streamIdentifier(stream));
        response.setError(errorStatus(grpc.status.INVALID_ARGUMENT, 'BadRequest', new sharedPb.BadRequest().setMessage(message), 'BadRequest'));
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
      if (outcome.commit === null) success.setNoPosition(empty());
      // As the real server: a write's position is its commit position, reported as both parts.
      else success.setPosition(new sharedPb.AllStreamPosition().setCommitPosition(`${outcome.commit}`).setPreparePosition(`${outcome.commit}`));
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
    response.setError(errorStatus(grpc.status.ALREADY_EXISTS, 'WrongExpectedVersion', wrong, 'WrongExpectedVersion'));
  }

  // ---- reads --------------------------------------------------------------------------------

  private read(call: grpc.ServerWritableStream<InstanceType<typeof ReadReq>, ReadRespMsg>): void {
    if (!this.track(call, () => call.emit('error', UNAVAILABLE))) return;
    const options = call.request.getOptions();
    if (!options) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'options are required' });
      return;
    }
    const structured = options.getUuidOption()?.hasStructured() ?? false;
    const toResponse = (event: LoggedEvent): ReadRespMsg => new ReadResp().setEvent(this.readEvent(event, structured));
    if (options.hasSubscription()) {
      if (!options.hasAll()) {
        call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'stream subscriptions are not implemented by the test double' });
        return;
      }
      return this.subscribeToAll(call, options, toResponse);
    }
    const count = Number(BigInt(options.getCount() || '0'));
    const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
    let events: LoggedEvent[];
    const streamOptions = options.getStream();
    if (streamOptions) {
      const stream = streamName(streamOptions.getStreamIdentifier());
      const existing = this.streams.get(stream);
      if (!existing) {
        call.write(new ReadResp().setStreamNotFound(new ReadResp.StreamNotFound().setStreamIdentifier(streamIdentifier(stream))));
        call.end();
        return;
      }
      const last = existing.length - 1;
      const from = streamOptions.hasRevision()
        ? Number(BigInt(streamOptions.getRevision()))
        : streamOptions.hasEnd()
          ? backwards ? last : existing.length
          : 0;
      // Both directions include the event at the revision they start from.
      events = backwards ? existing.slice(0, Math.min(from, last) + 1).reverse() : existing.slice(from);
    } else {
      events = this.readAllEvents(allFrom(options), backwards);
      const filter = toFilter(options);
      if (filter) events = events.filter(filter.filter);
    }
    void this.writeAll(call, events.slice(0, count).map(toResponse));
  }

  /** `$all` in read order: forwards from P includes the event at P, backwards from P gives the events before P. */
  private readAllEvents(from: Position | 'start' | 'end', backwards: boolean): LoggedEvent[] {
    if (from === 'start') return backwards ? [] : [...this.log];
    if (from === 'end') return backwards ? [...this.log].reverse() : [];
    return backwards
      ? this.log.filter((e) => comparePosition(e, from) < 0).reverse()
      : this.log.filter((e) => comparePosition(e, from) >= 0);
  }

  private subscribeToAll(
    call: grpc.ServerWritableStream<InstanceType<typeof ReadReq>, ReadRespMsg>,
    options: ReadReqOptions,
    toResponse: (event: LoggedEvent) => ReadRespMsg,
  ): void {
    const from = allFrom(options);
    // A subscription from P starts strictly after P.
    const cursor =
      from === 'start' ? 0 : from === 'end' ? this.log.length : this.log.filter((e) => comparePosition(e, from) <= 0).length;
    const subscription = new AllSubscription(this.log, call, cursor, toFilter(options), toResponse);
    this.subscriptions.add(subscription);
    const end = (): void => {
      subscription.close();
      this.subscriptions.delete(subscription);
    };
    call.on('cancelled', end);
    call.on('error', end);
    call.on('close', end);
    call.write(new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())));
    subscription.pump();
  }

  private readEvent(event: LoggedEvent, structured: boolean): InstanceType<typeof ReadResp.ReadEvent> {
    const recorded = new ReadResp.ReadEvent.RecordedEvent()
      .setId(uuidMessage(event.id, structured))
      .setStreamIdentifier(streamIdentifier(event.stream))
      .setStreamRevision(event.revision.toString())
      .setCommitPosition(event.commit.toString())
      .setPreparePosition(event.prepare.toString())
      .setData(event.data)
      .setCustomMetadata(event.customMetadata);
    recorded
      .getMetadataMap()
      .set('type', event.type)
      .set('content-type', event.isJson ? 'application/json' : 'application/octet-stream')
      .set('created', event.created.toString());
    return new ReadResp.ReadEvent().setEvent(recorded).setCommitPosition(event.commit.toString());
  }

  /** Writes a finite read reply with flow control, then ends the call. */
  private async writeAll(call: grpc.ServerWritableStream<InstanceType<typeof ReadReq>, ReadRespMsg>, responses: ReadRespMsg[]): Promise<void> {
    for (const response of responses) {
      if (call.cancelled || call.destroyed) return;
      if (!call.write(response)) {
        await new Promise<void>((resolve) => {
          call.once('drain', resolve);
          call.once('close', resolve);
        });
      }
    }
    if (!call.cancelled && !call.destroyed) call.end();
  }
}
