/**
 * The EventStoreDB test double's protocol pieces: the shapes of proposed and logged events, and the
 * conversions between them and the messages of the client's own gRPC service definitions.
 */
import grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import googleEmptyPb from 'google-protobuf/google/protobuf/empty_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';

export type ProposedMessage = InstanceType<typeof streamsPb.AppendReq.ProposedMessage | typeof streamsPb.BatchAppendReq.ProposedMessage>;
export type StatusMsg = InstanceType<typeof statusPb.Status>;
export type StreamIdentifierMsg = InstanceType<typeof sharedPb.StreamIdentifier>;

/** What a client calls see when the store goes down, as with a connection lost. */
export const UNAVAILABLE: grpc.StatusObject = {
  code: grpc.status.UNAVAILABLE,
  details: 'the EventStoreDB test double went down',
  metadata: new grpc.Metadata(),
};
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface Proposed {
  readonly id: string;
  readonly type: string;
  readonly isJson: boolean;
  readonly data: Uint8Array;
  readonly customMetadata: Uint8Array;
}

export interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

export interface LoggedEvent extends Proposed, Position {
  readonly stream: string;
  readonly revision: number;
  /** .NET ticks (100 ns) since the Unix epoch, as the real server's `created`. */
  readonly created: bigint;
}

export type Expected = 'any' | 'no_stream' | 'stream_exists' | bigint;

export class ProtocolError extends Error {
  constructor(
    readonly code: grpc.status,
    message: string,
  ) {
    super(message);
  }
}

export const isSystemStream = (stream: string): boolean => stream.startsWith('$');
export const comparePosition = (a: Position, b: Position): number =>
  a.commit === b.commit ? Number(a.prepare - b.prepare) : a.commit < b.commit ? -1 : 1;

export function uuidToString(uuid: InstanceType<typeof sharedPb.UUID> | undefined): string {
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

export function uuidMessage(id: string, structured: boolean): InstanceType<typeof sharedPb.UUID> {
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

export function streamIdentifier(stream: string): StreamIdentifierMsg {
  return new sharedPb.StreamIdentifier().setStreamName(Buffer.from(stream, 'utf8'));
}

export const streamName = (identifier: StreamIdentifierMsg | undefined): string =>
  Buffer.from(identifier?.getStreamName_asU8() ?? new Uint8Array()).toString('utf8');

/** The expected revision of Append (`revision`) and BatchAppend (`stream_position`) options. */
export function expectedOf(options: { hasNoStream(): boolean; hasStreamExists(): boolean }, revision: string | null): Expected {
  if (revision !== null) return BigInt(revision);
  return options.hasNoStream() ? 'no_stream' : options.hasStreamExists() ? 'stream_exists' : 'any';
}

export function toProposed(message: ProposedMessage): Proposed {
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

/**
 * A google.rpc.Status carrying an error detail, as BatchAppend replies carry them; `typeName` is the
 * detail's full protobuf name (`event_store.client.Timeout`, `google.protobuf.Empty`).
 */
export function errorStatus(code: grpc.status, message: string, detail: { serializeBinary(): Uint8Array }, typeName: string): StatusMsg {
  const any = new anyPb.Any();
  any.pack(detail.serializeBinary(), typeName);
  return new statusPb.Status().setCode(code as number).setMessage(message).setDetails(any);
}

/**
 * Why the server refuses a write it cannot take now. Streams.BatchAppend.cs turns the NotHandled
 * reply into a status of code 0 whose details are an empty google.protobuf.Empty, with this message
 * (the client reports it as an unknown error): not ready in the Unknown, PreLeader and
 * ResigningLeader states of an election (ClusterVNodeController.cs), too busy under load, and no
 * leader info on a follower that does not know the leader yet.
 */
export type WriteRefusal = 'not-ready' | 'too-busy' | 'no-leader-info';
const refusalMessages: Record<WriteRefusal, string> = {
  'not-ready': 'Server Is Not Ready',
  'too-busy': 'Server Is Busy',
  'no-leader-info': 'No leader info available in response',
};

/** The server's Timeout status (a write's prepare or commit phase, 2 s by default, or its deadline passed). */
export const timeoutStatus = (): StatusMsg => errorStatus(grpc.status.DEADLINE_EXCEEDED, 'Timeout', new sharedPb.Timeout(), 'event_store.client.Timeout');

/** The server's reply to a write it refuses now (a NotHandled reply of its write path). */
export const refusalStatus = (reason: WriteRefusal): StatusMsg =>
  errorStatus(0, refusalMessages[reason], new googleEmptyPb.Empty(), 'google.protobuf.Empty');
