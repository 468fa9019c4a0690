/**
 * The writes of `event_store.client.streams.Streams`: Append, BatchAppend, Delete and Tombstone, as
 * a KurrentDB node's gRPC layer and request manager answer them (kurrent-io/KurrentDB
 * src/KurrentDB.Core/Services/Transport/Grpc/Streams.{Append,BatchAppend,Delete}.cs, Status.cs,
 * RpcExceptions.cs, Services/RequestManager/Managers/RequestManagerBase.cs).
 *
 * Every write goes through one pipeline (`commit`): a fault a test switched on, the writer's delay,
 * the write itself (checked against everything written), then the acknowledgement, once the write
 * is indexed (a leader) or at once (NodeSettings.acknowledge). As on a node, a request that waits
 * longer than the prepare/commit timeout (2 s) is answered "timed out" while its write, once queued,
 * still lands: the client cannot tell a timed-out append that committed from one that did not. A
 * request cancelled (its gRPC deadline passed, the client went away) before its write is dropped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import grpc from '@grpc/grpc-js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { Status as RpcStatus } from '@eventstore/db-client/generated/status_pb.js';
import type { AppendReq, AppendResp, BatchAppendReq, BatchAppendResp, DeleteReq, DeleteResp, TombstoneReq, TombstoneResp } from '@eventstore/db-client/generated/streams_pb.js';
// google-protobuf is a dependency of @eventstore/db-client (its generated messages are built on it).
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import type { AppendOutcome, DeleteOutcome, EventLog, ExpectedRevision, ProposedEvent } from './event-log.js';
import { type NodeBehaviour, REQUEST_TIMEOUT_MS, WRITE_TIMEOUT_MS } from './node-behaviour.js';
import { BadRequestError, parseUuid, readStreamName, streamIdentifier } from './wire.js';

/** The real server's default `MaxAppendSize` (1 MiB of event data, metadata and type per append). */
export const MAX_APPEND_SIZE_BYTES = 1_048_576;
/** The code of ExpectedVersion.Any / NoStream / StreamExists in a node's error metadata. */
const EXPECTED_VERSION_CODES = { any: -2n, no_stream: -1n, stream_exists: -4n } as const;

export type Status = { code: grpc.status; details: string; metadata?: grpc.Metadata };

export class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.details);
  }
}

export function invalidArgument(details: string, metadata?: grpc.Metadata): Status {
  return { code: grpc.status.INVALID_ARGUMENT, details, metadata };
}

export function toStatus(error: unknown): Status {
  if (error instanceof StatusError) return error.status;
  if (error instanceof BadRequestError) return invalidArgument(error.message);
  return { code: grpc.status.UNKNOWN, details: error instanceof Error ? error.message : 'unknown error' };
}

/** RpcExceptions.StreamDeleted: what reads and the unary writes answer for a tombstoned stream. */
export function streamDeletedStatus(streamId: string): Status {
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'stream-deleted');
  metadata.set('stream-name', streamId);
  return { code: grpc.status.FAILED_PRECONDITION, details: `Event stream '${streamId}' is deleted.`, metadata };
}

/** RpcExceptions.Timeout: a prepare or commit timeout of the request manager. */
function timeoutStatus(message: string): Status {
  return { code: grpc.status.ABORTED, details: `Operation timed out: ${message}` };
}

function maxAppendSizeStatus(): Status {
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'maximum-append-size-exceeded');
  metadata.set('maximum-append-size', String(MAX_APPEND_SIZE_BYTES));
  return invalidArgument(`Maximum Append Size of ${MAX_APPEND_SIZE_BYTES} Exceeded.`, metadata);
}

const empty = () => new sharedPb.Empty();

type ExpectedCase = 'any' | 'no_stream' | 'stream_exists' | 'revision' | 'none';

function toExpected(kind: ExpectedCase, revision: () => string): ExpectedRevision {
  switch (kind) {
    case 'any':
    case 'no_stream':
    case 'stream_exists':
      return { kind };
    case 'revision':
      return { kind: 'revision', revision: BigInt(revision()) };
    default:
      throw new BadRequestError('an expected stream revision is required');
  }
}

function appendExpected(options: AppendReq.Options): ExpectedRevision {
  const Case = streamsPb.AppendReq.Options.ExpectedStreamRevisionCase;
  const kinds: Record<number, ExpectedCase> = { [Case.ANY]: 'any', [Case.NO_STREAM]: 'no_stream', [Case.STREAM_EXISTS]: 'stream_exists', [Case.REVISION]: 'revision' };
  return toExpected(kinds[options.getExpectedStreamRevisionCase()] ?? 'none', () => options.getRevision());
}

function batchExpected(options: BatchAppendReq.Options): ExpectedRevision {
  const Case = streamsPb.BatchAppendReq.Options.ExpectedStreamPositionCase;
  const kinds: Record<number, ExpectedCase> = { [Case.ANY]: 'any', [Case.NO_STREAM]: 'no_stream', [Case.STREAM_EXISTS]: 'stream_exists', [Case.STREAM_POSITION]: 'revision' };
  return toExpected(kinds[options.getExpectedStreamPositionCase()] ?? 'none', () => options.getStreamPosition());
}

function deleteExpected(options: DeleteReq.Options | TombstoneReq.Options): ExpectedRevision {
  // Both messages number their cases alike.
  const Case = streamsPb.DeleteReq.Options.ExpectedStreamRevisionCase;
  const kinds: Record<number, ExpectedCase> = { [Case.ANY]: 'any', [Case.NO_STREAM]: 'no_stream', [Case.STREAM_EXISTS]: 'stream_exists', [Case.REVISION]: 'revision' };
  return toExpected(kinds[options.getExpectedStreamRevisionCase()] ?? 'none', () => options.getRevision());
}

function toProposedEvent(message: AppendReq.ProposedMessage | BatchAppendReq.ProposedMessage): ProposedEvent {
  const metadata = message.getMetadataMap();
  const type = metadata.get('type');
  const contentType = metadata.get('content-type');
  if (type === undefined || contentType === undefined) {
    const missing = new grpc.Metadata();
    missing.set('exception', 'missing-required-metadata-property');
    missing.set('required-metadata-properties', 'type,content-type');
    throw new StatusError(invalidArgument(`Required Metadata Property '${type === undefined ? 'type' : 'content-type'}' is missing`, missing));
  }
  return {
    id: parseUuid(message.getId()),
    type,
    isJson: contentType === 'application/json',
    data: message.getData_asU8(),
    metadata: message.getCustomMetadata_asU8(),
  };
}

function appendedSize(event: ProposedEvent): number {
  return event.data.length + event.metadata.length + Buffer.byteLength(event.type, 'utf8');
}

type Committed<O> = { readonly kind: 'answered'; readonly outcome: O } | { readonly kind: 'timeout'; readonly message: string } | { readonly kind: 'cancelled' };

/** The sequence an outcome's acknowledgement waits for (undefined: answered at once, e.g. a refusal). */
function ackSequence(outcome: AppendOutcome | DeleteOutcome): number | undefined {
  return outcome.kind === 'success' && outcome.lastSequence >= 0 ? outcome.lastSequence : undefined;
}

/** The write pipeline shared by every write (see the file comment). */
async function commit<O extends AppendOutcome | DeleteOutcome>(
  node: NodeBehaviour,
  log: EventLog,
  streamId: string,
  eventTypes: readonly string[],
  perform: () => O,
  signal: AbortSignal,
): Promise<Committed<O>> {
  const fault = node.takeFault(streamId, eventTypes);
  if (fault === 'timeout-without-commit') return { kind: 'timeout', message: 'Prepare phase timeout.' };
  const { writeDelayMs, acknowledge } = node.settings;
  let written = false;
  const write = (async (): Promise<O | undefined> => {
    if (writeDelayMs > 0) await sleep(writeDelayMs, undefined, { ref: false });
    // A node checks the request's cancellation just before it writes: a request given up by then is dropped.
    if (signal.aborted) return undefined;
    const outcome = perform();
    written = true;
    const sequence = ackSequence(outcome);
    if (sequence !== undefined && acknowledge === 'indexed') await log.indexedThrough(sequence);
    return outcome;
  })();
  if (fault === 'commit-then-timeout') {
    await write;
    return { kind: 'timeout', message: 'Commit phase timeout.' };
  }
  const timeout = new AbortController();
  const timedOut = sleep(REQUEST_TIMEOUT_MS, 'timeout' as const, { signal: timeout.signal, ref: false }).catch(() => 'cleared' as const);
  const first = await Promise.race([write, timedOut]);
  timeout.abort();
  if (first === 'timeout') return { kind: 'timeout', message: written ? 'Commit phase timeout.' : 'Prepare phase timeout.' };
  if (first === undefined || first === 'cleared') return { kind: 'cancelled' };
  return { kind: 'answered', outcome: first };
}

/** An abort signal for a unary or client-streaming call: aborted when the call is cancelled (its deadline, the client). */
function callSignal(call: { on(event: 'cancelled', listener: () => void): unknown }): AbortSignal {
  const controller = new AbortController();
  call.on('cancelled', () => controller.abort());
  return controller.signal;
}

// ------------------------------------------------------------------------------------------ Append

function appendResponse(outcome: Exclude<AppendOutcome, { kind: 'stream_deleted' }>, expected: ExpectedRevision): AppendResp {
  const response = new streamsPb.AppendResp();
  if (outcome.kind === 'success') {
    const success = new streamsPb.AppendResp.Success();
    if (outcome.currentRevision === undefined) success.setNoStream(empty());
    else success.setCurrentRevision(outcome.currentRevision.toString(10));
    if (outcome.position === undefined) success.setNoPosition(empty());
    else {
      // The real server reports the last event's log position as both commit and prepare position.
      const position = new streamsPb.AppendResp.Position();
      position.setCommitPosition(outcome.position.toString(10));
      position.setPreparePosition(outcome.position.toString(10));
      success.setPosition(position);
    }
    return response.setSuccess(success);
  }
  // A wrong expected version is an answer, not a gRPC error; the server fills the current fields and
  // their 20.6.0 duplicates.
  const wrong = new streamsPb.AppendResp.WrongExpectedVersion();
  switch (expected.kind) {
    case 'any':
      wrong.setExpectedAny(empty());
      wrong.setAny2060(empty());
      break;
    case 'stream_exists':
      wrong.setExpectedStreamExists(empty());
      wrong.setStreamExists2060(empty());
      break;
    case 'no_stream':
      // The real server also sets the deprecated expected_revision_20_6_0 to 2^64 - 1 here; the
      // generated code types that field as a JavaScript number, which cannot carry it, so it is left out.
      wrong.setExpectedNoStream(empty());
      break;
    case 'revision':
      wrong.setExpectedRevision(expected.revision.toString(10));
      if (expected.revision <= BigInt(Number.MAX_SAFE_INTEGER)) wrong.setExpectedRevision2060(Number(expected.revision));
      break;
  }
  if (outcome.currentRevision === undefined) {
    wrong.setCurrentNoStream(empty());
    wrong.setNoStream2060(empty());
  } else {
    wrong.setCurrentRevision(outcome.currentRevision.toString(10));
    if (outcome.currentRevision <= BigInt(Number.MAX_SAFE_INTEGER)) wrong.setCurrentRevision2060(Number(outcome.currentRevision));
  }
  return response.setWrongExpectedVersion(wrong);
}

// ------------------------------------------------------------------------------------- BatchAppend

function packed(message: { serializeBinary(): Uint8Array }, typeName: string): anyPb.Any {
  const any = new anyPb.Any();
  any.pack(message.serializeBinary(), typeName);
  return any;
}

function rpcStatus(code: number, message: string, details: anyPb.Any): RpcStatus {
  return new statusPb.Status().setCode(code).setMessage(message).setDetails(details);
}

/** Google.Rpc.Status.WrongExpectedVersion (Status.cs, WrongExpectedVersion.Create). */
function wrongExpectedVersionRpcStatus(current: bigint | undefined, expected: ExpectedRevision): RpcStatus {
  const details = new sharedPb.WrongExpectedVersion();
  if (current === undefined) details.setCurrentNoStream(empty());
  else details.setCurrentStreamRevision(current.toString(10));
  if (expected.kind === 'revision') details.setExpectedStreamPosition(expected.revision.toString(10));
  else if (expected.kind === 'any') details.setExpectedAny(empty());
  else if (expected.kind === 'no_stream') details.setExpectedNoStream(empty());
  else details.setExpectedStreamExists(empty());
  return rpcStatus(grpc.status.ALREADY_EXISTS, 'WrongExpectedVersion', packed(details, 'event_store.client.WrongExpectedVersion'));
}

function streamDeletedRpcStatus(streamId: string): RpcStatus {
  const details = new sharedPb.StreamDeleted();
  details.setStreamIdentifier(streamIdentifier(streamId));
  return rpcStatus(grpc.status.NOT_FOUND, 'StreamDeleted', packed(details, 'event_store.client.StreamDeleted'));
}

function timeoutRpcStatus(): RpcStatus {
  return rpcStatus(grpc.status.DEADLINE_EXCEEDED, 'Timeout', packed(new sharedPb.Timeout(), 'event_store.client.Timeout'));
}

function maxAppendSizeRpcStatus(): RpcStatus {
  const details = new sharedPb.MaximumAppendSizeExceeded();
  details.setMaxappendsize(MAX_APPEND_SIZE_BYTES);
  return rpcStatus(grpc.status.INVALID_ARGUMENT, 'MaximumAppendSizeExceeded', packed(details, 'event_store.client.MaximumAppendSizeExceeded'));
}

function badRequestRpcStatus(message: string): RpcStatus {
  const details = new sharedPb.BadRequest();
  details.setMessage(message);
  return rpcStatus(grpc.status.INVALID_ARGUMENT, 'BadRequest', packed(details, 'event_store.client.BadRequest'));
}

function batchSuccess(outcome: Extract<AppendOutcome, { kind: 'success' }>): BatchAppendResp.Success {
  const success = new streamsPb.BatchAppendResp.Success();
  if (outcome.currentRevision === undefined) success.setNoStream(empty());
  else success.setCurrentRevision(outcome.currentRevision.toString(10));
  if (outcome.position === undefined) success.setNoPosition(empty());
  else {
    const position = new sharedPb.AllStreamPosition();
    position.setCommitPosition(outcome.position.toString(10));
    position.setPreparePosition(outcome.position.toString(10));
    success.setPosition(position);
  }
  return success;
}

interface PendingBatch {
  readonly streamId: string;
  readonly expected: ExpectedRevision;
  readonly events: ProposedEvent[];
  sizeBytes: number;
  readonly timer: NodeJS.Timeout;
}

// ------------------------------------------------------------------------------------------ handlers

/** Writes served so far, by gRPC method (a batch append counts each append it carried). */
export interface WritesServed {
  append: number;
  batchAppend: number;
  delete: number;
  tombstone: number;
}

export class StreamsWrites {
  readonly served: WritesServed = { append: 0, batchAppend: 0, delete: 0, tombstone: 0 };

  constructor(
    private readonly log: EventLog,
    private readonly node: NodeBehaviour,
  ) {}

  readonly append = (call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>): void => {
    const signal = callSignal(call);
    let options: AppendReq.Options | undefined;
    const events: ProposedEvent[] = [];
    let sizeBytes = 0;
    let finished = false;
    const answer = (status: Status | null, response?: AppendResp) => {
      if (finished) return;
      finished = true;
      // A call whose deadline passed was answered DEADLINE_EXCEEDED by gRPC already.
      if (signal.aborted) return;
      if (status !== null) callback(status);
      else callback(null, response);
    };
    call.on('data', (request: AppendReq) => {
      if (finished) return;
      try {
        if (options === undefined) {
          if (!request.hasOptions()) throw new BadRequestError('the first message of an append must be its options');
          options = request.getOptions() as AppendReq.Options;
          appendExpected(options);
          readStreamName(options.getStreamIdentifier());
          return;
        }
        if (!request.hasProposedMessage()) throw new BadRequestError('only proposed messages may follow the options');
        const event = toProposedEvent(request.getProposedMessage() as AppendReq.ProposedMessage);
        sizeBytes += appendedSize(event);
        if (sizeBytes > MAX_APPEND_SIZE_BYTES) throw new StatusError(maxAppendSizeStatus());
        events.push(event);
      } catch (error) {
        answer(toStatus(error));
      }
    });
    call.on('end', () => {
      if (finished) return;
      if (options === undefined) return answer(invalidArgument('an append needs its options'));
      const expected = appendExpected(options);
      const streamId = readStreamName(options.getStreamIdentifier());
      this.served.append += 1;
      void commit(
        this.node,
        this.log,
        streamId,
        events.map((event) => event.type),
        () => this.log.append(streamId, expected, events),
        signal,
      ).then((committed) => {
        if (committed.kind === 'cancelled') return answer({ code: grpc.status.CANCELLED, details: 'cancelled' });
        if (committed.kind === 'timeout') return answer(timeoutStatus(committed.message));
        const outcome = committed.outcome;
        if (outcome.kind === 'stream_deleted') return answer(streamDeletedStatus(streamId));
        answer(null, appendResponse(outcome, expected));
      });
    });
    call.on('error', () => {
      finished = true;
    });
  };

  /**
   * One long-lived call carrying many appends, told apart by correlation id (Streams.BatchAppend.cs):
   * an append's options open it, with a deadline the node cuts to its own write timeout; its events
   * may follow in several messages; the one marked final sends it to the writer. The answers come
   * back on the same call, in the order the writes complete.
   */
  readonly batchAppend = (call: grpc.ServerDuplexStream<BatchAppendReq, BatchAppendResp>): void => {
    const signal = callSignal(call);
    const pending = new Map<string, PendingBatch>();
    let inFlight = 0;
    let ended = false;
    const send = (correlation: BatchAppendReq['getCorrelationId'] extends () => infer U ? U : never, streamId: string | undefined, fill: (response: BatchAppendResp) => void) => {
      if (signal.aborted) return;
      const response = new streamsPb.BatchAppendResp();
      response.setCorrelationId(correlation);
      if (streamId !== undefined) response.setStreamIdentifier(streamIdentifier(streamId));
      fill(response);
      call.write(response);
    };
    const settleOne = () => {
      inFlight -= 1;
      if (ended && inFlight === 0 && !signal.aborted) call.end();
    };
    call.on('data', (request: BatchAppendReq) => {
      const correlation = request.getCorrelationId();
      let key: string;
      try {
        key = parseUuid(correlation);
      } catch {
        return;
      }
      let streamIdForError: string | undefined;
      try {
        if (request.hasOptions()) {
          const options = request.getOptions() as BatchAppendReq.Options;
          const streamId = readStreamName(options.getStreamIdentifier());
          streamIdForError = streamId;
          const expected = batchExpected(options);
          const requested = options.hasDeadline() ? (options.getDeadline() as { toDate(): Date }).toDate().getTime() - Date.now() : Number.POSITIVE_INFINITY;
          const timeoutMs = Math.min(requested, WRITE_TIMEOUT_MS);
          if (timeoutMs <= 0) {
            send(correlation, streamId, (response) => response.setError(timeoutRpcStatus()));
            return;
          }
          if (!pending.has(key)) {
            // An append whose last message does not come within its timeout is answered "timed out" and forgotten.
            const timer = setTimeout(() => {
              if (pending.delete(key)) send(correlation, streamId, (response) => response.setError(timeoutRpcStatus()));
            }, timeoutMs);
            timer.unref();
            pending.set(key, { streamId, expected, events: [], sizeBytes: 0, timer });
          }
        }
        const batch = pending.get(key);
        if (batch === undefined) return;
        streamIdForError = batch.streamId;
        for (const message of request.getProposedMessagesList()) {
          const event = toProposedEvent(message);
          batch.sizeBytes += appendedSize(event);
          batch.events.push(event);
        }
        if (batch.sizeBytes > MAX_APPEND_SIZE_BYTES) {
          clearTimeout(batch.timer);
          pending.delete(key);
          send(correlation, batch.streamId, (response) => response.setError(maxAppendSizeRpcStatus()));
          return;
        }
        if (!request.getIsFinal()) return;
        clearTimeout(batch.timer);
        pending.delete(key);
        inFlight += 1;
        this.served.batchAppend += 1;
        void commit(
          this.node,
          this.log,
          batch.streamId,
          batch.events.map((event) => event.type),
          () => this.log.append(batch.streamId, batch.expected, batch.events),
          signal,
        ).then((committed) => {
          if (committed.kind === 'answered') {
            const outcome = committed.outcome;
            send(correlation, batch.streamId, (response) => {
              if (outcome.kind === 'success') response.setSuccess(batchSuccess(outcome));
              else if (outcome.kind === 'stream_deleted') response.setError(streamDeletedRpcStatus(batch.streamId));
              else response.setError(wrongExpectedVersionRpcStatus(outcome.currentRevision, batch.expected));
            });
          } else if (committed.kind === 'timeout') {
            send(correlation, batch.streamId, (response) => response.setError(timeoutRpcStatus()));
          }
          settleOne();
        });
      } catch (error) {
        const batch = pending.get(key);
        if (batch !== undefined) clearTimeout(batch.timer);
        pending.delete(key);
        send(correlation, streamIdForError, (response) => response.setError(badRequestRpcStatus(error instanceof Error ? error.message : String(error))));
      }
    });
    call.on('end', () => {
      ended = true;
      for (const batch of pending.values()) clearTimeout(batch.timer);
      pending.clear();
      if (inFlight === 0 && !signal.aborted) call.end();
    });
    call.on('error', () => {
      for (const batch of pending.values()) clearTimeout(batch.timer);
      pending.clear();
    });
  };

  readonly delete = (call: grpc.ServerUnaryCall<DeleteReq, DeleteResp>, callback: grpc.sendUnaryData<DeleteResp>): void => {
    this.deleteStream(
      call,
      callback,
      false,
      () => new streamsPb.DeleteResp(),
      () => new streamsPb.DeleteResp.Position(),
    );
  };

  readonly tombstone = (call: grpc.ServerUnaryCall<TombstoneReq, TombstoneResp>, callback: grpc.sendUnaryData<TombstoneResp>): void => {
    this.deleteStream(
      call,
      callback,
      true,
      () => new streamsPb.TombstoneResp(),
      () => new streamsPb.TombstoneResp.Position(),
    );
  };

  private deleteStream<Response extends DeleteResp | TombstoneResp>(
    call: grpc.ServerUnaryCall<DeleteReq | TombstoneReq, Response>,
    callback: grpc.sendUnaryData<Response>,
    hard: boolean,
    response: () => Response,
    position: () => DeleteResp.Position | TombstoneResp.Position,
  ): void {
    const signal = callSignal(call);
    let streamId: string;
    let expected: ExpectedRevision;
    try {
      const options = call.request.getOptions();
      if (options === undefined) throw new BadRequestError('delete options are required');
      streamId = readStreamName(options.getStreamIdentifier());
      expected = deleteExpected(options);
    } catch (error) {
      callback(toStatus(error));
      return;
    }
    this.served[hard ? 'tombstone' : 'delete'] += 1;
    void commit(this.node, this.log, streamId, [], () => this.log.delete(streamId, expected, hard), signal).then((committed) => {
      if (signal.aborted) return;
      if (committed.kind === 'cancelled') return;
      if (committed.kind === 'timeout') return callback(timeoutStatus(committed.message));
      const outcome = committed.outcome;
      if (outcome.kind === 'stream_deleted') return callback(streamDeletedStatus(streamId));
      if (outcome.kind === 'wrong_expected_version') {
        // RpcExceptions.WrongExpectedVersion("Delete", ...): a gRPC error with the versions in its metadata.
        const expectedCode = expected.kind === 'revision' ? expected.revision : EXPECTED_VERSION_CODES[expected.kind];
        const actual = outcome.currentRevision ?? -1n;
        const metadata = new grpc.Metadata();
        metadata.set('exception', 'wrong-expected-version');
        metadata.set('stream-name', streamId);
        metadata.set('expected-version', expectedCode.toString(10));
        metadata.set('actual-version', actual.toString(10));
        return callback({
          code: grpc.status.FAILED_PRECONDITION,
          details: `Delete failed due to WrongExpectedVersion. Stream: ${streamId}, Expected version: ${expectedCode}, Actual version: ${actual}`,
          metadata,
        });
      }
      const answer = response();
      const at = position();
      // DeleteStreamCompleted carries the commit position as both positions.
      at.setCommitPosition(outcome.position.toString(10));
      at.setPreparePosition(outcome.position.toString(10));
      (answer as { setPosition(value: typeof at): unknown }).setPosition(at);
      callback(null, answer);
    });
  }
}
