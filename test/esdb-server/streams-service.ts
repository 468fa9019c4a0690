/**
 * `event_store.client.streams.Streams` of the EventStoreDB test server: the writes (streams-writes.ts)
 * and Read (reads and catch-up subscriptions). Behaviour follows a KurrentDB node's gRPC layer
 * (kurrent-io/KurrentDB src/KurrentDB.Core/Services/Transport/Grpc/Streams.*.cs,
 * Transport/Enumerators, Storage/ReaderIndex/{IndexReader,AllReader}.cs). Reads see only what the
 * log's index has caught up with (event-log.ts).
 */
import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import type { ReadReq, ReadResp } from '@eventstore/db-client/generated/streams_pb.js';
import type { EventLog, LogRecord } from './event-log.js';
import { compileFilter, type ServerFilter } from './filters.js';
import type { NodeBehaviour } from './node-behaviour.js';
import { invalidArgument, StatusError, streamDeletedStatus, StreamsWrites, toStatus } from './streams-writes.js';
import { BadRequestError, caughtUpResponse, checkpointResponse, confirmationResponse, readEventResponse, readStreamName, streamNotFoundResponse } from './wire.js';

export { MAX_APPEND_SIZE_BYTES } from './streams-writes.js';

/** The real server's page size and default filter search window (Enumerator.ReadBatchSize). */
const READ_BATCH_SIZE = 32;

const INVALID_POSITION = invalidArgument('Trying to read from an invalid position.');

/** A position in $all: (commit, prepare), ordered by commit, then prepare (TFPos). */
interface Pos {
  readonly commit: bigint;
  readonly prepare: bigint;
}

function comparePos(a: Pos, b: Pos): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** Every event of this log is self-committed: it sits at (its position, its position). */
function recordPos(record: LogRecord): Pos {
  return { commit: record.position, prepare: record.position };
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

interface Filtered {
  readonly filter: ServerFilter;
  /** Events a catch-up page considers at most (the filter's search window). */
  readonly window: number;
  readonly checkpointInterval: number;
}

/** The filter of a read or subscription to $all, with the real server's checkpoint interval. */
function readFilter(options: ReadReq.Options): Filtered | undefined {
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
  const window = filterOptions.getWindowCase() === streamsPb.ReadReq.Options.FilterOptions.WindowCase.MAX ? filterOptions.getMax() : READ_BATCH_SIZE;
  const multiplier = filterOptions.getCheckpointintervalmultiplier();
  if (window <= 0 || multiplier <= 0) throw new BadRequestError('the filter window and checkpoint interval multiplier must be positive');
  return { filter, window, checkpointInterval: window * multiplier };
}

export class StreamsHandlers {
  private readonly writes: StreamsWrites;
  readonly served: StreamsWrites['served'];
  readonly append: StreamsWrites['append'];
  readonly batchAppend: StreamsWrites['batchAppend'];
  readonly delete: StreamsWrites['delete'];
  readonly tombstone: StreamsWrites['tombstone'];

  constructor(
    private readonly log: EventLog,
    node: NodeBehaviour,
  ) {
    this.writes = new StreamsWrites(log, node);
    this.served = this.writes.served;
    this.append = this.writes.append;
    this.batchAppend = this.writes.batchAppend;
    this.delete = this.writes.delete;
    this.tombstone = this.writes.tombstone;
  }

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

  /**
   * A stream read by the IndexReader's rules: a tombstoned stream is an error, a missing or
   * soft-deleted one "not found"; `$tb`, `$maxCount` and `$maxAge` hide the events before the
   * stream's first readable revision (a forward read from below it starts there).
   */
  private async readStream(
    streamId: string,
    options: ReadReq.Options.StreamOptions,
    count: bigint,
    backwards: boolean,
    structuredUuid: boolean,
    writer: ResponseWriter,
    signal: AbortSignal,
  ): Promise<void> {
    const view = this.log.streamView(streamId);
    if (view.kind === 'deleted') throw new StatusError(streamDeletedStatus(streamId));
    if (view.kind === 'not_found') return writer.send(streamNotFoundResponse(streamId));
    const RevisionCase = streamsPb.ReadReq.Options.StreamOptions.RevisionOptionCase;
    const revisionCase = options.getRevisionOptionCase();
    const { first, last } = view;
    let revision =
      revisionCase === RevisionCase.REVISION ? BigInt(options.getRevision()) : revisionCase === RevisionCase.END ? (backwards ? last : last + 1n) : backwards ? -1n : first;
    if (backwards && revision > last) revision = last;
    if (!backwards && revision < first) revision = first;
    let sent = 0n;
    // The view is fixed when the read starts; the stream only grows, so paging it during backpressure is safe.
    while (sent < count && !signal.aborted && revision >= first && revision <= last) {
      const record = view.at(revision);
      revision += backwards ? -1n : 1n;
      if (record === undefined) continue;
      await writer.send(readEventResponse(record, structuredUuid));
      sent += 1n;
    }
  }

  /**
   * A position a read of $all may start from: its commit part must be a record's start or past the
   * index's end (what a node's transaction-file reader accepts); the prepare part then only orders it
   * among the records at that commit position.
   */
  private checkedPos(position: ReadReq.Options.Position): Pos {
    const pos = { commit: BigInt(position.getCommitPosition()), prepare: BigInt(position.getPreparePosition()) };
    if (pos.commit < this.log.indexedEndPosition && !this.log.isBoundary(pos.commit)) throw new StatusError(INVALID_POSITION);
    return pos;
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
    const end = this.log.indexedCount;
    let index: number;
    switch (options.getAllOptionCase()) {
      case AllCase.START:
        index = backwards ? -1 : 0;
        break;
      case AllCase.END:
        index = backwards ? end - 1 : end;
        break;
      case AllCase.POSITION: {
        // Forwards from a position includes the record there (its (p, p) >= the position when the
        // prepare part is not past it); backwards covers the records before it.
        const from = this.checkedPos(options.getPosition() as ReadReq.Options.Position);
        index = this.log.indexAtOrAfter(from.commit);
        const at = this.log.at(index);
        if (backwards) index = at !== undefined && comparePos(recordPos(at), from) < 0 ? index : index - 1;
        else if (at !== undefined && comparePos(recordPos(at), from) < 0) index += 1;
        break;
      }
      default:
        throw new BadRequestError('a read of $all needs a start, an end or a position');
    }
    let sent = 0n;
    for (; sent < count && !signal.aborted && index >= 0 && index < end; index += backwards ? -1 : 1) {
      const record = this.log.at(index);
      if (record === undefined) continue;
      if (filter !== undefined && !filter.allows(record)) continue;
      await writer.send(readEventResponse(record, structuredUuid));
      sent += 1n;
    }
  }

  /**
   * A catch-up subscription to $all (Enumerator.AllSubscription / AllSubscriptionFiltered). A
   * filtered one catches up in pages of at most `window` considered events, as a node reads them;
   * its checkpoints are the last event sent or, when a page sent nothing past it, the page's start,
   * which after the first page is (the end of the last record considered, 0): a position whose
   * commit and prepare parts differ, as a node's do. Live, it checkpoints every
   * `checkpointInterval` events considered, at the event's own position.
   */
  private async subscribeToAll(
    options: ReadReq.Options.AllOptions,
    filtered: Filtered | undefined,
    structuredUuid: boolean,
    writer: ResponseWriter,
    signal: AbortSignal,
  ): Promise<void> {
    const AllCase = streamsPb.ReadReq.Options.AllOptions.AllOptionCase;
    /** Exclusive start: events at or before it are never sent; undefined: from the start. */
    let after: Pos | undefined;
    let index: number;
    switch (options.getAllOptionCase()) {
      case AllCase.START:
        index = 0;
        break;
      case AllCase.END: {
        // After the newest indexed record (a node's LastIndexedPosition), exclusive.
        index = this.log.indexedCount;
        const newest = this.log.written(index - 1);
        after = newest === undefined ? undefined : recordPos(newest);
        break;
      }
      case AllCase.POSITION: {
        after = this.checkedPos(options.getPosition() as ReadReq.Options.Position);
        index = this.log.indexAtOrAfter(after.commit);
        break;
      }
      default:
        throw new BadRequestError('a subscription to $all needs a start, an end or a position');
    }
    await writer.send(confirmationResponse(randomUUID()));
    const isAfterStart = (record: LogRecord) => after === undefined || comparePos(recordPos(record), after) > 0;
    // As the client-facing enumerator does, a checkpoint not past the last one sent is dropped.
    let lastCheckpoint: Pos | undefined;
    const checkpoint = async (position: Pos) => {
      if (lastCheckpoint !== undefined && comparePos(position, lastCheckpoint) <= 0) return;
      lastCheckpoint = position;
      await writer.send(checkpointResponse(position.commit, position.prepare));
    };
    // With nothing to catch up on, a node goes live at once, without a checkpoint. Unfiltered, the
    // live loop below catches up too (a node sends no checkpoints without a filter).
    if (filtered !== undefined && index < this.log.indexedCount) {
      index = await this.filteredCatchUp(index, after, filtered, structuredUuid, writer, checkpoint, signal);
    }
    let caughtUp = false;
    let considered = 0;
    while (!signal.aborted) {
      if (index >= this.log.indexedCount) {
        if (!caughtUp) {
          await writer.send(caughtUpResponse());
          caughtUp = true;
        }
        await this.log.nextIndexed(signal);
        continue;
      }
      const record = this.log.at(index);
      index += 1;
      if (record === undefined || !isAfterStart(record)) continue;
      if (filtered === undefined) {
        await writer.send(readEventResponse(record, structuredUuid));
        continue;
      }
      if (filtered.filter.allows(record)) await writer.send(readEventResponse(record, structuredUuid));
      considered += 1;
      if (considered >= filtered.checkpointInterval) {
        considered = 0;
        await checkpoint(recordPos(record));
      }
    }
  }

  /** The catch-up of a filtered subscription, page by page (see subscribeToAll); answers the index to go live from. */
  private async filteredCatchUp(
    startIndex: number,
    after: Pos | undefined,
    filtered: Filtered,
    structuredUuid: boolean,
    writer: ResponseWriter,
    sendCheckpoint: (position: Pos) => Promise<void>,
    signal: AbortSignal,
  ): Promise<number> {
    let checkpoint: Pos | undefined = after;
    let counter = 0;
    let pageStart: Pos = after ?? { commit: 0n, prepare: 0n };
    let index = startIndex;
    while (!signal.aborted) {
      const end = this.log.indexedCount;
      let considered = 0;
      let nextPos = pageStart;
      let found = 0;
      while (index < end && considered < filtered.window && found < READ_BATCH_SIZE) {
        const record = this.log.at(index);
        index += 1;
        if (record === undefined) continue;
        considered += 1;
        nextPos = { commit: record.postPosition, prepare: 0n };
        if (!filtered.filter.allows(record)) continue;
        found += 1;
        const position = recordPos(record);
        if (checkpoint !== undefined && comparePos(position, checkpoint) <= 0) continue;
        await writer.send(readEventResponse(record, structuredUuid));
        checkpoint = position;
      }
      if ((checkpoint === undefined || comparePos(checkpoint, pageStart) < 0) && comparePos(pageStart, nextPos) < 0) checkpoint = pageStart;
      counter += considered;
      if (index >= end) {
        // Going live: a checkpoint, so that at least one comes within every interval.
        if (checkpoint !== undefined) await sendCheckpoint(checkpoint);
        return index;
      }
      if (counter >= filtered.checkpointInterval) {
        counter %= filtered.checkpointInterval;
        if (checkpoint !== undefined) await sendCheckpoint(checkpoint);
      }
      pageStart = nextPos;
    }
    return index;
  }

  private async subscribeToStream(streamId: string, options: ReadReq.Options.StreamOptions, structuredUuid: boolean, writer: ResponseWriter, signal: AbortSignal): Promise<void> {
    const RevisionCase = streamsPb.ReadReq.Options.StreamOptions.RevisionOptionCase;
    const lastReadable = () => {
      const view = this.log.streamView(streamId);
      return view.kind === 'readable' ? view.last : -1n;
    };
    let next: bigint;
    switch (options.getRevisionOptionCase()) {
      case RevisionCase.START:
        next = 0n;
        break;
      case RevisionCase.END:
        next = lastReadable() + 1n;
        break;
      case RevisionCase.REVISION:
        // Exclusive, like a position in $all.
        next = BigInt(options.getRevision()) + 1n;
        break;
      default:
        throw new BadRequestError('a subscription to a stream needs a start, an end or a revision');
    }
    await writer.send(confirmationResponse(randomUUID()));
    let caughtUp = false;
    while (!signal.aborted) {
      const view = this.log.streamView(streamId);
      if (view.kind === 'deleted') throw new StatusError(streamDeletedStatus(streamId));
      if (view.kind === 'readable' && next < view.first) next = view.first;
      if (view.kind !== 'readable' || next > view.last) {
        if (!caughtUp) {
          await writer.send(caughtUpResponse());
          caughtUp = true;
        }
        await this.log.nextIndexed(signal);
        continue;
      }
      const record = view.at(next);
      next += 1n;
      if (record !== undefined) await writer.send(readEventResponse(record, structuredUuid));
    }
  }
}
