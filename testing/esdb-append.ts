/**
 * Streams.Append of the EventStoreDB test double: one write per call. The client uses it instead of
 * BatchAppend only with per-call credentials or a server without BatchAppend.
 */
import grpc from '@grpc/grpc-js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { WriteOutcome } from './esdb-log.js';
import { ProtocolError, UNAVAILABLE, expectedOf, streamName, toProposed, type Expected, type Proposed } from './esdb-protocol.js';

const { AppendResp } = streamsPb;

export interface WriteContext {
  write(stream: string, events: readonly Proposed[], expected: Expected): WriteOutcome;
  /** The refusal of a write over the server's MaxAppendSize, or null when it fits. */
  tooLarge(events: readonly Proposed[]): Partial<grpc.StatusObject> | null;
  /** Registers an open call to be failed when the store goes down; false (and failed) when it is down. */
  track(call: NodeJS.EventEmitter, fail: () => void): boolean;
  /** The call was answered: nothing to fail any more. */
  forget(fail: () => void): void;
}

export function appendUnary(
  context: WriteContext,
  call: grpc.ServerReadableStream<InstanceType<typeof streamsPb.AppendReq>, InstanceType<typeof AppendResp>>,
  callback: grpc.sendUnaryData<InstanceType<typeof AppendResp>>,
): void {
  let options: InstanceType<typeof streamsPb.AppendReq.Options> | undefined;
  const events: Proposed[] = [];
  let failure: ProtocolError | undefined;
  let answered = false;
  const answer: typeof callback = (error, response) => {
    context.forget(fail);
    if (!answered) callback(error, response);
    answered = true;
  };
  const fail = (): void => answer(UNAVAILABLE);
  if (!context.track(call, fail)) return;
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
    const tooLarge = context.tooLarge(events);
    if (tooLarge) return answer(tooLarge);
    const expected = expectedOf(options, options.hasRevision() ? options.getRevision() : null);
    const outcome = context.write(streamName(options.getStreamIdentifier()), events, expected);
    const response = new AppendResp();
    if (outcome.ok) {
      const success = new AppendResp.Success();
      if (outcome.revision === null) success.setNoStream(new sharedPb.Empty());
      else success.setCurrentRevision(outcome.revision.toString());
      if (outcome.position === null) success.setNoPosition(new sharedPb.Empty());
      else success.setPosition(new AppendResp.Position().setCommitPosition(`${outcome.position}`).setPreparePosition(`${outcome.position}`));
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
