/**
 * `event_store.client.streams.Streams` of the EventStoreDB test server: Append and Read (reads and
 * catch-up subscriptions). Behaviour follows the real server's gRPC layer (EventStore/EventStore
 * src/EventStore.Core/Services/Transport/Grpc/Streams.*.cs and Transport/Enumerators).
 */
import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { AppendReq, AppendResp, ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb.js';
import type { EventLog, ExpectedRevision, LogRecord, ProposedEvent } from './event-log.js';
import { compileFilter, type ServerFilter } from './filters.js';
import {
  BadRequestError,
  caughtUpResponse,
  checkpointResponse,
  confirmationResponse,
  parseUuid,
  readEventResponse,
  readStreamName,
  streamNotFoundResponse,
} from './wire.js';

/** The real server's default `MaxAppendSize` (1 MiB of event data, metadata and type per append). */
export const MAX_APPEND_SIZE_BYTES = 1_048_576;
/** The real server's page size and default filter search window (Enumerator.ReadBatchSize). */
const READ_BATCH_SIZE = 32;

type Status = { code: grpc.status; details: string; metadata?: grpc.Metadata };

function invalidArgument(details: string, metadata?: grpc.Metadata): Status {
  return { code: grpc.status.INVALID_ARGUMENT, details, metadata };
}

const INVALID_POSITION: Status = invalidArgument('Trying to read from an invalid position.');

class StatusError extends Error {
  constructor(readonly status: Status) {
    super(status.details);
  }
}

function toStatus(error: unknown): Status {
  if (error instanceof StatusError) return error.status;
  if (error instanceof BadRequestError) return invalidArgument(error.message);
  return { code: grpc.status.UNKNOWN, details: error instanceof Error ? error.message : 'unknown error' };
}

function toExpectedRevision(options: AppendReq.Options): ExpectedRevision {
  const Case = streamsPb.AppendReq.Options.ExpectedStreamRevisionCase;
  switch (options.getExpectedStreamRevisionCase()) {
    case Case.ANY:
      return { kind: 'any' };
    case Case.NO_STREAM:
      return { kind: 'no_stream' };
    case Case.STREAM_EXISTS:
      return { kind: 'stream_exists' };
    case Case.REVISION:
      return { kind: 'revision', revision: BigInt(options.getRevision()) };
    default:
      throw new BadRequestError('an expected stream revision is required');
  }
}

function toProposedEvent(message: AppendReq.ProposedMessage): ProposedEvent {
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

function appendResponse(outcome: ReturnType<EventLog['append']>, expected: ExpectedRevision): AppendResp {
  const response = new streamsPb.AppendResp();
  const empty = () => new sharedPb.Empty();
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

/** Writes with backpressure: waits for the client to drain its window before sending more. */
class ResponseWriter {
  constructor(
    private readonly call: grpc.ServerWritableStream<ReadReq, ReadResp>,
    private readonly signal: AbortSignal,
  ) {}

  async send(response: ReadResp): Promise<void> {
    if (this.signal.aborted) return;
    if (this.call.write(response)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.call.off('drain', done);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      this.call.on('drain', done);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** The filter of a read or subscription to $all, with the real server's checkpoint interval. */
function readFilter(options: ReadReq.Options): { filter: ServerFilter; checkpointInterval: number } | undefined {
  if (options.getFilterOptionCase() !== streamsPb.ReadReq.Options.FilterOptionCase.FILTER) return undefined;
  const filterOptions = options.getFilter() as ReadReq.Options.FilterOptions;
  const FilterCase = streamsPb.ReadReq.Options.FilterOptions.FilterCase;
  const on = filterOptions.getFilterCase() === FilterCase.STREAM_IDENTIFIER ? 'stream' : filterOptions.getFilterCase() === FilterCase.EVENT_TYPE ? 'type' : undefined;
  if (on === undefined) throw new BadRequestError('a filter needs a stream identifier or event type expression');
  const expression = (on === 'stream' ? filterOptions.getStreamIdentifier() : filterOptions.getEventType()) as ReadReq.Options.FilterOptions.Expression;
  let filter: ServerFilter;
  try {
    filter = expression.getRegex() === '' ? compileFilter({ on, prefixes: expression.getPrefixList() }) : compileFilter({ on, regex: expression.getRegex() });
  } catch (error) {
    throw new BadRequestError(`invalid filter: ${error instanceof Error ? error.message : String(error)}`);
  }
  const window =
    filterOptions.getWindowCase() === streamsPb.ReadReq.Options.FilterOptions.WindowCase.MAX ? filterOptions.getMax() : READ_BATCH_SIZE;
  const multiplier = filterOptions.getCheckpointintervalmultiplier();
  if (window <= 0 || multiplier <= 0) throw new BadRequestError('the filter window and checkpoint interval multiplier must be positive');
  return { filter, checkpointInterval: window * multiplier };
}

export class StreamsHandlers {
  constructor(private readonly log: EventLog) {}

  readonly append = (call: grpc.ServerReadableStream<AppendReq, AppendResp>, callback: grpc.sendUnaryData<AppendResp>): void => {
    let options: AppendReq.Options | undefined;
    const events: ProposedEvent[] = [];
    let sizeBytes = 0;
    let finished = false;
    const fail = (status: Status) => {
      if (finished) return;
      finished = true;
      callback(status);
    };
    call.on('data', (request: AppendReq) => {
      if (finished) return;
      try {
        if (options === undefined) {
          if (!request.hasOptions()) throw new BadRequestError('the first message of an append must be its options');
          options = request.getOptions() as AppendReq.Options;
          toExpectedRevision(options);
          readStreamName(options.getStreamIdentifier());
          return;
        }
        if (!request.hasProposedMessage()) throw new BadRequestError('only proposed messages may follow the options');
        const event = toProposedEvent(request.getProposedMessage() as AppendReq.ProposedMessage);
        sizeBytes += event.data.length + event.metadata.length + Buffer.byteLength(event.type, 'utf8');
        if (sizeBytes > MAX_APPEND_SIZE_BYTES) {
          const metadata = new grpc.Metadata();
          metadata.set('exception', 'maximum-append-size-exceeded');
          metadata.set('maximum-append-size', String(MAX_APPEND_SIZE_BYTES));
          throw new StatusError(invalidArgument(`Maximum Append Size of ${MAX_APPEND_SIZE_BYTES} Exceeded.`, metadata));
        }
        events.push(event);
      } catch (error) {
        fail(toStatus(error));
      }
    });
    call.on('end', () => {
      if (finished) return;
      if (options === undefined) return fail(invalidArgument('an append needs its options'));
      finished = true;
      const expected = toExpectedRevision(options);
      const outcome = this.log.append(readStreamName(options.getStreamIdentifier()), expected, events);
      callback(null, appendResponse(outcome, expected));
    });
    call.on('cancelled', () => {
      finished = true;
    });
    call.on('error', () => {
      finished = true;
    });
  };

  readonly read = (call: grpc.ServerWritableStream<ReadReq, ReadResp>): void => {
    const controller = new AbortController();
    call.on('cancelled', () => controller.abort());
    call.on('error', () => controller.abort());
    const writer = new ResponseWriter(call, controller.signal);
    this.serve(call.request, writer, controller.signal).then(
      () => {
        if (!controller.signal.aborted) call.end();
      },
      (error: unknown) => {
        if (!controller.signal.aborted) call.emit('error', toStatus(error));
      },
    );
  };

  private async serve(request: ReadReq, writer: ResponseWriter, signal: AbortSignal): Promise<void> {
    const options = request.getOptions();
    if (options === undefined) throw new BadRequestError('read options are required');
    if (!options.hasUuidOption()) throw new BadRequestError('`uuidOption` is a required argument');
    const structuredUuid = (options.getUuidOption() as ReadReq.Options.UUIDOption).getContentCase() === streamsPb.ReadReq.Options.UUIDOption.ContentCase.STRUCTURED;
    const backwards = options.getReadDirection() === streamsPb.ReadReq.Options.ReadDirection.BACKWARDS;
    const subscription = options.getCountOptionCase() === streamsPb.ReadReq.Options.CountOptionCase.SUBSCRIPTION;
    const filtered = readFilter(options);
    const StreamCase = streamsPb.ReadReq.Options.StreamOptionCase;

    if (options.getStreamOptionCase() === StreamCase.STREAM) {
      const streamOptions = options.getStream() as ReadReq.Options.StreamOptions;
      const streamId = readStreamName(streamOptions.getStreamIdentifier());
      if (filtered !== undefined || (subscription && backwards)) throw new BadRequestError('The combination of options is invalid.');
      if (subscription) return this.subscribeToStream(streamId, streamOptions, structuredUuid, writer, signal);
      return this.readStream(streamId, streamOptions, BigInt(options.getCount()), backwards, structuredUuid, writer, signal);
    }
    if (options.getStreamOptionCase() === StreamCase.ALL) {
      const allOptions = options.getAll() as ReadReq.Options.AllOptions;
      if (subscription) {
        if (backwards) throw new BadRequestError('The combination of options is invalid.');
        return this.subscribeToAll(allOptions, filtered, structuredUuid, writer, signal);
      }
      return this.readAll(allOptions, BigInt(options.getCount()), backwards, filtered?.filter, structuredUuid, writer, signal);
    }
    throw new BadRequestError('a read needs a stream or $all');
  }

  private async readStream(
    streamId: string,
    options: ReadReq.Options.StreamOptions,
    count: bigint,
    backwards: boolean,
    structuredUuid: boolean,
    writer: ResponseWriter,
    signal: AbortSignal,
  ): Promise<void> {
    const stream = this.log.stream(streamId);
    if (stream === undefined) return writer.send(streamNotFoundResponse(streamId));
    const RevisionCase = streamsPb.ReadReq.Options.StreamOptions.RevisionOptionCase;
    const revisionCase = options.getRevisionOptionCase();
    const last = BigInt(stream.length - 1);
    let revision =
      revisionCase === RevisionCase.REVISION ? BigInt(options.getRevision()) : revisionCase === RevisionCase.END ? (backwards ? last : last + 1n) : backwards ? -1n : 0n;
    if (backwards && revision > last) revision = last;
    let sent = 0n;
    // The stream only grows, so indexing it while paused for backpressure is safe.
    while (sent < count && !signal.aborted && revision >= 0n && revision <= last) {
      await writer.send(readEventResponse(stream[Number(revision)], structuredUuid));
      sent += 1n;
      revision += backwards ? -1n : 1n;
    }
  }

  /** Index in $all of the first record a read from `position` covers, after checking that the position is a record boundary. */
  private boundaryIndex(position: ReadReq.Options.Position): number {
    const commit = BigInt(position.getCommitPosition());
    const prepare = BigInt(position.getPreparePosition());
    if (commit !== prepare || !this.log.isBoundary(commit)) throw new StatusError(INVALID_POSITION);
    return this.log.indexAtOrAfter(commit);
  }

  private async readAll(
    options: ReadReq.Options.AllOptions,
    count: bigint,
    backwards: boolean,
    filter: ServerFilter | undefined,
    structuredUuid: boolean,
    writer: ResponseWriter,
    signal: AbortSignal,
  ): Promise<void> {
    const AllCase = streamsPb.ReadReq.Options.AllOptions.AllOptionCase;
    let index: number;
    switch (options.getAllOptionCase()) {
      case AllCase.START:
        index = backwards ? -1 : 0;
        break;
      case AllCase.END:
        index = backwards ? this.log.recordCount - 1 : this.log.recordCount;
        break;
      case AllCase.POSITION:
        // Forwards from a position includes the record there; backwards starts with the one before it.
        index = this.boundaryIndex(options.getPosition() as ReadReq.Options.Position) - (backwards ? 1 : 0);
        break;
      default:
        throw new BadRequestError('a read of $all needs a start, an end or a position');
    }
    const end = this.log.recordCount;
    let sent = 0n;
    for (; sent < count && !signal.aborted && index >= 0 && index < end; index += backwards ? -1 : 1) {
      const record = this.log.at(index) as LogRecord;
      if (filter !== undefined && !filter.allows(record)) continue;
      await writer.send(readEventResponse(record, structuredUuid));
      sent += 1n;
    }
  }

  private async subscribeToAll(
    options: ReadReq.Options.AllOptions,
    filtered: { filter: ServerFilter; checkpointInterval: number } | undefined,
    structuredUuid: boolean,
    writer: ResponseWriter,
    signal: AbortSignal,
  ): Promise<void> {
    const AllCase = streamsPb.ReadReq.Options.AllOptions.AllOptionCase;
    let index: number;
    /** Exclusive start: events at or before it are never sent. */
    let after: bigint | undefined;
    switch (options.getAllOptionCase()) {
      case AllCase.START:
        index = 0;
        break;
      case AllCase.END:
        index = this.log.recordCount;
        break;
      case AllCase.POSITION: {
        // Exclusive: the subscription starts after the event at the position. The real server reads
        // its catch-up pages from there, so the position must be a record boundary too, unless it lies
        // beyond the end of the log (then it waits for events past it).
        const position = options.getPosition() as ReadReq.Options.Position;
        const commit = BigInt(position.getCommitPosition());
        after = commit;
        if (commit > this.log.endPosition) {
          index = this.log.indexAtOrAfter(commit + 1n);
          break;
        }
        const at = this.boundaryIndex(position);
        index = this.log.at(at)?.position === commit ? at + 1 : at;
        break;
      }
      default:
        throw new BadRequestError('a subscription to $all needs a start, an end or a position');
    }
    await writer.send(confirmationResponse(randomUUID()));
    // The real server goes live at once, without a checkpoint, when there is nothing to catch up on.
    let catchingUp = index < this.log.recordCount;
    let caughtUp = false;
    let considered = 0;
    let lastCheckpoint = -1n;
    const checkpoint = async (position: bigint) => {
      if (position <= lastCheckpoint) return;
      lastCheckpoint = position;
      await writer.send(checkpointResponse(position));
    };
    while (!signal.aborted) {
      const record = this.log.at(index);
      if (record === undefined) {
        if (!caughtUp) {
          // Leaving catch-up: a filtered subscription is told how far the server has looked.
          if (filtered !== undefined && catchingUp && index > 0) await checkpoint((this.log.at(index - 1) as LogRecord).position);
          await writer.send(caughtUpResponse());
          caughtUp = true;
          catchingUp = false;
        }
        await this.log.nextAppend(signal);
        continue;
      }
      index += 1;
      if (after !== undefined && record.position <= after) continue;
      if (filtered === undefined) {
        await writer.send(readEventResponse(record, structuredUuid));
        continue;
      }
      if (filtered.filter.allows(record)) await writer.send(readEventResponse(record, structuredUuid));
      considered += 1;
      if (considered >= filtered.checkpointInterval) {
        considered = 0;
        await checkpoint(record.position);
      }
    }
  }

  private async subscribeToStream(
    streamId: string,
    options: ReadReq.Options.StreamOptions,
    structuredUuid: boolean,
    writer: ResponseWriter,
    signal: AbortSignal,
  ): Promise<void> {
    const RevisionCase = streamsPb.ReadReq.Options.StreamOptions.RevisionOptionCase;
    const length = () => this.log.stream(streamId)?.length ?? 0;
    let next: number;
    switch (options.getRevisionOptionCase()) {
      case RevisionCase.START:
        next = 0;
        break;
      case RevisionCase.END:
        next = length();
        break;
      case RevisionCase.REVISION:
        // Exclusive, like a position in $all.
        next = Number(BigInt(options.getRevision()) + 1n);
        break;
      default:
        throw new BadRequestError('a subscription to a stream needs a start, an end or a revision');
    }
    await writer.send(confirmationResponse(randomUUID()));
    let caughtUp = false;
    while (!signal.aborted) {
      const stream = this.log.stream(streamId);
      const record = stream?.[next];
      if (record === undefined) {
        if (!caughtUp) {
          await writer.send(caughtUpResponse());
          caughtUp = true;
        }
        await this.log.nextAppend(signal);
        continue;
      }
      next += 1;
      await writer.send(readEventResponse(record, structuredUuid));
    }
  }
}
