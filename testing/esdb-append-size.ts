/**
 * The EventStoreDB server's limit on the size of one write, for the test double: servers up to
 * v25.0 refuse a write (one Append call, or one correlation id of a BatchAppend call) whose events
 * weigh more than `MaxAppendSize` (default 1 MiB), whole, before anything of it is stored.
 *
 * Follows KurrentDB: Streams.BatchAppend.cs (the size summed as each message's events arrive;
 * once past the limit the write is answered `Status.MaximumAppendSizeExceeded` and its later
 * messages are ignored), Streams.Append.cs (`RpcExceptions.MaxAppendSizeExceeded`), Event.cs
 * (`SizeOnDisk`) and Status.cs.
 */
import grpc from '@grpc/grpc-js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';

/** The server's default MaxAppendSize. */
export const defaultMaxAppendSize = 1024 * 1024;

interface SizedEvent {
  readonly type: string;
  readonly data: Uint8Array;
  readonly customMetadata: Uint8Array;
}

/** Event.SizeOnDisk summed over a write: data bytes, custom metadata bytes, and the type's UTF-16 code units twice. */
export function appendSize(events: readonly SizedEvent[]): number {
  let size = 0;
  for (const event of events) size += event.data.length + event.customMetadata.length + event.type.length * 2;
  return size;
}

/** BatchAppend's error for a write over the limit: InvalidArgument, with a MaximumAppendSizeExceeded detail. */
export function maxAppendSizeStatus(maxAppendSize: number): InstanceType<typeof statusPb.Status> {
  const any = new anyPb.Any();
  any.pack(new sharedPb.MaximumAppendSizeExceeded().setMaxappendsize(maxAppendSize).serializeBinary(), 'event_store.client.MaximumAppendSizeExceeded');
  return new statusPb.Status().setCode(grpc.status.INVALID_ARGUMENT as number).setMessage('MaximumAppendSizeExceeded').setDetails(any);
}

/** Append's error for a write over the limit: InvalidArgument, with the `exception` metadata the client reads. */
export function maxAppendSizeError(maxAppendSize: number): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'maximum-append-size-exceeded');
  metadata.set('maximum-append-size', String(maxAppendSize));
  return { code: grpc.status.INVALID_ARGUMENT, details: `Maximum Append Size of ${maxAppendSize} Exceeded.`, metadata };
}
