/**
 * Streams.Read of the EventStoreDB test double: reads of a stream and of `$all` (forwards /
 * backwards, count), and subscriptions to `$all` (optionally filtered, with checkpoints).
 */
import grpc from '@grpc/grpc-js';
import { randomUUID } from 'node:crypto';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { EventLog } from './esdb-log.js';
import { UNAVAILABLE, streamIdentifier, streamName, uuidMessage, type LoggedEvent, type Position } from './esdb-protocol.js';

const { ReadReq, ReadResp } = streamsPb;
type ReadReqMsg = InstanceType<typeof ReadReq>;
type ReadReqOptions = InstanceType<typeof ReadReq.Options>;
type ReadRespMsg = InstanceType<typeof ReadResp>;
type ReadCall = grpc.ServerWritableStream<ReadReqMsg, ReadRespMsg>;

/** A filtered subscription checkpoints every multiplier × search window events looked at; the window defaults to 32. */
const DEFAULT_SEARCH_WINDOW = 32;

type EventFilter = (event: LoggedEvent) => boolean;
interface SubscriptionFilter {
  filter: EventFilter;
  checkpointEvery: number;
}

function allFrom(options: ReadReqOptions): Position | 'start' | 'end' {
  const all = options.getAll();
  const position = all?.getPosition();
  if (position) return { commit: BigInt(position.getCommitPosition()), prepare: BigInt(position.getPreparePosition()) };
  return all?.hasEnd() ? 'end' : 'start';
}

function toFilter(options: ReadReqOptions): SubscriptionFilter | null {
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
export class AllSubscription {
  private seen = 0;
  private caughtUp = false;
  private paused = false;
  private closed = false;

  constructor(
    private readonly log: readonly LoggedEvent[],
    private readonly call: ReadCall,
    private cursor: number,
    private readonly filter: SubscriptionFilter | null,
    private readonly toResponse: (event: LoggedEvent) => ReadRespMsg,
    /** Whether the server sends "caught up" (from 24.2 on). */
    private readonly sendCaughtUp: boolean,
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
    if (this.sendCaughtUp && !this.call.write(new ReadResp().setCaughtUp(new ReadResp.CaughtUp()))) this.waitForDrain();
  }

  close(): void {
    this.closed = true;
  }

  private checkpoint(event: LoggedEvent): boolean {
    const checkpoint = new ReadResp.Checkpoint().setCommitPosition(event.commit.toString()).setPreparePosition(event.prepare.toString());
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

export interface ReadContext {
  log: EventLog;
  subscriptions: Set<AllSubscription>;
  /** Registers an open call to be failed when the store goes down; false (and failed) when it is down. */
  track(call: NodeJS.EventEmitter, fail: () => void): boolean;
  /** Whether subscriptions send "caught up". */
  caughtUpMessages(): boolean;
}

export function read(context: ReadContext, call: ReadCall): void {
  if (!context.track(call, () => call.emit('error', UNAVAILABLE))) return;
  const options = call.request.getOptions();
  if (!options) {
    call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'options are required' });
    return;
  }
  const structured = options.getUuidOption()?.hasStructured() ?? false;
  const toResponse = (event: LoggedEvent): ReadRespMsg => new ReadResp().setEvent(readEvent(event, structured));
  if (options.hasSubscription()) {
    if (!options.hasAll()) {
      call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'stream subscriptions are not implemented by the test double' });
      return;
    }
    subscribeToAll(context, call, options, toResponse);
    return;
  }
  const count = Number(BigInt(options.getCount() || '0'));
  const backwards = options.getReadDirection() === ReadReq.Options.ReadDirection.BACKWARDS;
  let events: LoggedEvent[];
  const streamOptions = options.getStream();
  if (streamOptions) {
    const stream = streamName(streamOptions.getStreamIdentifier());
    const existing = context.log.stream(stream);
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
    events = context.log.readAll(allFrom(options), backwards);
    const filter = toFilter(options);
    if (filter) events = events.filter(filter.filter);
  }
  void writeAll(call, events.slice(0, count).map(toResponse));
}

function subscribeToAll(context: ReadContext, call: ReadCall, options: ReadReqOptions, toResponse: (event: LoggedEvent) => ReadRespMsg): void {
  // A subscription from P starts strictly after P.
  const cursor = context.log.indexAfter(allFrom(options));
  const subscription = new AllSubscription(context.log.events, call, cursor, toFilter(options), toResponse, context.caughtUpMessages());
  context.subscriptions.add(subscription);
  const end = (): void => {
    subscription.close();
    context.subscriptions.delete(subscription);
  };
  call.on('cancelled', end);
  call.on('error', end);
  call.on('close', end);
  call.write(new ReadResp().setConfirmation(new ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID())));
  subscription.pump();
}

function readEvent(event: LoggedEvent, structured: boolean): InstanceType<typeof ReadResp.ReadEvent> {
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
async function writeAll(call: ReadCall, responses: ReadRespMsg[]): Promise<void> {
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
