import {
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendResult as EsdbAppendResult,
  BACKWARDS,
  CancelledError,
  convertToCommandError,
  type CurrentRevision,
  DeadlineExceededError,
  END,
  EventStoreDBClient,
  eventTypeFilter,
  type Filter,
  FORWARDS,
  jsonEvent,
  NotLeaderError,
  type Position,
  type ReadPosition,
  START,
  StreamDeletedError as EsdbStreamDeletedError,
  type StreamingRead,
  StreamNotFoundError,
  streamNameFilter,
  TimeoutError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
import {
  type AppendOptions,
  type AppendResult,
  assertAppendable,
  assertAppendableMany,
  assertReadCount,
  type EventFilter,
  type EventStore,
  EventStoreUnavailableError,
  type EventToAppend,
  type ExpectedRevision,
  type JsonObject,
  matchesFilter,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  StreamDamagedError,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  WrongExpectedRevisionError,
} from './event-store.port.js';

/*
 * Positions. The port's position is the event's commit position in $all. EventStoreDB orders $all by
 * (commit, prepare). Read in the server's source (EventStore/EventStore v20.6 to KurrentDB v25.1:
 * StorageWriterService.WritePrepares, AllReader, IndexCommitter, RequestManager.WriteEvents):
 * - An append through gRPC, of one event or many, writes one prepare record per event, each flagged
 *   IsCommitted ("self-committed"), with no separate commit record. $all reads, subscriptions and
 *   stream reads report such an event at (its own log position, its own log position). The events
 *   of one multi-event append therefore do NOT share a commit position: each has its own, strictly
 *   increasing in append order, and commit == prepare.
 * - The append reply's position is the log position of the last prepare, i.e. the last event's.
 * - Only explicit transactions, a feature of the legacy TCP client API that gRPC does not offer,
 *   write a commit record; the events of such a transaction share the commit record's position and
 *   differ by prepare position.
 * So the commit position alone identifies every event this adapter writes, and resuming from it
 * (exclusive) neither loses nor repeats the rest of a multi-event append. Rather than hide the
 * legacy case behind a position that is not unique, an event with commit != prepare is refused
 * loudly when it would be returned (toRecordedEvent). Internally, resumption and paging use the full
 * (commit, prepare) pair of the last event received, which is exact in every case.
 */

/** Events per readAll page. Client 6.x reads $all without a server-side filter, so filtering happens here. */
const READ_ALL_PAGE_EVENTS = 1_000;
/** The client sets no gRPC deadline on streaming reads, so every read (or readAll page) is bounded here. */
const READ_TIMEOUT_MS = 30_000;
/** Sent to the server, which answers with a timeout error once it passes. */
const APPEND_DEADLINE_MS = 10_000;
/** A client-side bound on top of the server's deadline, should the reply itself be lost. */
const APPEND_TIMEOUT_MS = APPEND_DEADLINE_MS + 5_000;
const PING_TIMEOUT_MS = 2_000;
const RESUBSCRIBE_BACKOFF_MIN_MS = 100;
const RESUBSCRIBE_BACKOFF_MAX_MS = 5_000;
/** Positions travel as unsigned 64-bit integers; the server reports "no position" as 2^64 - 1. */
const MAX_POSITION = (1n << 63n) - 1n;
/** gRPC status codes (the client exposes errors with their raw code, not the enum). */
/** What the client threw, as an Error (the port sits below src/common, so it keeps its own). */
function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(`a non-Error was thrown (${thrown === null ? 'null' : typeof thrown})`, { cause: thrown });
}

const GRPC_RESOURCE_EXHAUSTED = 8;
const GRPC_INTERNAL = 13;

const ignore = (): void => undefined;

/** The fields of the client's recorded event that the mapping reads. */
export interface EsdbRecordedEvent {
  readonly id: string;
  readonly streamId: string;
  readonly type: string;
  readonly revision: bigint;
  readonly created: Date;
  readonly data: unknown;
  readonly metadata: unknown;
  readonly position?: Position;
}

/** EventStoreDB's own events (stream metadata, links, projections' output) live in `$` streams or carry `$` types. */
export function isSystemEvent(event: { readonly streamId: string; readonly type: string }): boolean {
  return event.streamId.startsWith('$') || event.type.startsWith('$');
}

export function passesFilter(event: { readonly streamId: string; readonly type: string }, filter: EventFilter | undefined): boolean {
  return !isSystemEvent(event) && matchesFilter(event, filter);
}

/** Escapes a literal for a .NET regular expression (the server evaluates filter regexes). */
function escapeRegex(literal: string): string {
  return literal.replace(/[\\^$.|?*+()[\]{}#]/g, (character) => `\\${character}`);
}

/**
 * The server-side filter of a subscription: a narrowing, never the final word, since every event is
 * checked again with `passesFilter`. The server takes one filter, on stream names or on event types,
 * while the port's filter is "category OR type": with both lists set, only system events can be
 * excluded server-side, as narrowing on one side would drop events that match only the other.
 * Categories use a regex rather than `${category}-` prefixes so that a stream named exactly after
 * its category (no dash: its own category) is not lost.
 */
export function serverSideFilter(filter: EventFilter | undefined): Filter {
  const categories = filter?.streamCategories ?? [];
  const types = filter?.eventTypes ?? [];
  if (categories.length > 0 && types.length === 0) {
    return streamNameFilter({ regex: `^(?:${categories.map(escapeRegex).join('|')})(?:-|$)` });
  }
  if (types.length > 0 && categories.length === 0) {
    return eventTypeFilter({ regex: `^(?:${types.map(escapeRegex).join('|')})$` });
  }
  return eventTypeFilter({ regex: '^[^$]' });
}

export function toWrongExpectedRevision(streamId: string, expected: ExpectedRevision, actual: CurrentRevision): WrongExpectedRevisionError {
  // The client's older (non-batch) append path can report a missing stream as revision -1.
  return new WrongExpectedRevisionError(streamId, expected, actual === 'no_stream' || actual < 0n ? 'no_stream' : actual);
}

/** Orders two $all positions as the server does: by commit position, then by prepare position. */
export function compareLogPositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

/** Where an exclusive port position sits in $all: every event the port reports has commit == prepare. */
function logPosition(position: bigint): Position {
  return { commit: position, prepare: position };
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

function toJsonObject(value: unknown, eventId: string, field: 'data' | 'metadata'): JsonObject {
  if (value instanceof Uint8Array) {
    // The client hands back bytes when the content type is not JSON or the metadata is not parseable.
    if (value.length === 0 && field === 'metadata') return {};
    try {
      value = JSON.parse(Buffer.from(value).toString('utf8')) as unknown;
    } catch {
      throw new Error(`invariant: the ${field} of event ${eventId} is not JSON`);
    }
  }
  if (value === undefined && field === 'metadata') return {};
  if (!isJsonObject(value)) throw new Error(`invariant: the ${field} of event ${eventId} is not a JSON object`);
  return value;
}

export function toRecordedEvent(event: EsdbRecordedEvent): RecordedEvent {
  const position = event.position;
  if (position === undefined || position.commit > MAX_POSITION) {
    throw new Error(`invariant: EventStoreDB reported no position for event ${event.id} (EventStoreDB 22.6 or later is required)`);
  }
  if (position.commit !== position.prepare) {
    throw new Error(`invariant: event ${event.id} was written by an explicit transaction and shares its commit position with other events`);
  }
  return {
    id: event.id,
    streamId: event.streamId,
    type: event.type,
    revision: event.revision,
    position: position.commit,
    data: toJsonObject(event.data, event.id, 'data'),
    metadata: toJsonObject(event.metadata, event.id, 'metadata'),
    createdAt: event.created,
  };
}

/**
 * Failures of the connection rather than of the request: they become EventStoreUnavailableError
 * (HTTP 503) and make a subscription resubscribe. Anything else is a bug or a refusal and is rethrown.
 */
export function isUnavailable(thrown: unknown): boolean {
  // Most calls reject with the client's CommandErrors, but its server-capabilities probe (run
  // before the first append) rejects with the raw gRPC error.
  const error = thrown instanceof Error ? convertToCommandError(thrown) : thrown;
  if (
    error instanceof UnavailableError ||
    error instanceof DeadlineExceededError ||
    error instanceof TimeoutError ||
    error instanceof CancelledError ||
    error instanceof NotLeaderError
  ) {
    return true;
  }
  if (error instanceof UnknownError) {
    // A reset HTTP/2 stream arrives as INTERNAL; a node that is starting or overloaded answers a
    // batch append with a status the client does not recognise ("Server Is Not Ready" / "Busy").
    return Number(error.code) === GRPC_INTERNAL || Number(error.code) === GRPC_RESOURCE_EXHAUSTED || /Server Is (Not Ready|Busy)/i.test(error.message);
  }
  // Cluster discovery gives up with a plain Error.
  return error instanceof Error && /^Failed to discover after/.test(error.message);
}

function toStoreError(error: unknown): unknown {
  return isUnavailable(error) ? new EventStoreUnavailableError('EventStoreDB is unreachable', { cause: error }) : error;
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return new Promise<T>((resolvePromise, rejectPromise) => {
    const timer = setTimeout(() => rejectPromise(new DeadlineExceededError(undefined, `${what} timed out after ${timeoutMs} ms`)), timeoutMs);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolvePromise(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        rejectPromise(asError(error));
      },
    );
  });
}

/**
 * Consumes a client read until `take` returns false or the read ends, within `timeoutMs`, and
 * cancels the gRPC call in every case. Errors surface as the client's CommandErrors.
 *
 * A read stopped early is cancelled and left flowing into nothing, never destroyed: destroying it
 * unpipes the client's gRPC call, and a call whose server had already sent everything (a `ping`, a
 * `headPosition` on a short log) then sits paused with its end unread. Cancelling such a call does
 * nothing, so the client would keep it, with its buffered events, for the life of the process, and
 * its dispose() would wait on it for ever.
 */
function drain<T>(read: StreamingRead<T>, take: (item: T) => boolean, timeoutMs: number): Promise<void> {
  // A late error after the read settled would otherwise be an unhandled 'error' event, which crashes the process.
  read.on('error', ignore);
  return new Promise<void>((resolveRead, rejectRead) => {
    const settle = (error?: unknown): void => {
      clearTimeout(timer);
      read.off('data', onData);
      read.off('end', onEnd);
      read.off('error', onError);
      // Whatever is left flows on, discarded, to the call's end.
      read.on('data', ignore);
      void read.cancel().catch(ignore);
      if (error === undefined) resolveRead();
      else rejectRead(asError(error));
    };
    const onData = (item: T): void => {
      let more: boolean;
      try {
        more = take(item);
      } catch (error) {
        settle(error);
        return;
      }
      if (!more) settle();
    };
    const onEnd = (): void => settle();
    const onError = (error: unknown): void => settle(error);
    const timer = setTimeout(() => settle(new DeadlineExceededError(undefined, `read timed out after ${timeoutMs} ms`)), timeoutMs);
    read.on('error', onError);
    read.on('end', onEnd);
    read.on('data', onData);
  });
}

interface ScanOptions {
  readonly direction: 'forwards' | 'backwards';
  /** Exclusive. */
  readonly fromPosition?: bigint;
  readonly filter?: EventFilter;
  readonly maxCount: number;
  /** Backwards only: stop once at or below this position. */
  readonly downTo?: bigint;
}

export class EsdbEventStore implements EventStore {
  readonly kind = 'esdb' as const;
  /** EventStoreDB has no transaction across streams: appendMany writes one stream after the other. */
  readonly multiStreamAppends = 'in_order' as const;
  /** Its appends are conditioned on the revision only: callers that need the event there read it. */
  readonly expectedEventIds = 'unsupported' as const;
  /** Reads may trail acknowledged appends (a node's index, a leader change); acknowledged events are not lost. */
  readonly shortStreams = 'not_yet_readable' as const;
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;
  /**
   * The newest non-system position known to be visible (from headPosition or an acknowledged
   * append). The log is append-only, so headPosition need not scan back past it.
   */
  private knownHead = 0n;

  constructor(connectionString: string) {
    // With it off, a refused append resolves instead of throwing, and the client's batch-append
    // path then misreports the stream's revision.
    if (/[?&]throwOnAppendFailure=false/i.test(connectionString)) {
      throw new Error('the EventStoreDB connection string must not set throwOnAppendFailure=false');
    }
    // One client serves the writes and the reads they are decided on: reads from a follower or a
    // read-only replica trail acknowledged writes, and a fold decided on them misses what was just
    // written (a funding, a reservation).
    const preference = /[?&]nodePreference=([^&]*)/i.exec(connectionString)?.[1];
    if (preference !== undefined && preference.toLowerCase() !== 'leader') {
      throw new Error("the EventStoreDB connection string's nodePreference must be leader (or unset): this service decides its writes on its reads");
    }
    try {
      this.client = EventStoreDBClient.connectionString(connectionString);
    } catch {
      // The client's parse error quotes the string, which may hold a password: never echo it.
      throw new Error('the EventStoreDB connection string is invalid');
    }
  }

  /** In order, each an append of its own; the first refusal or failure stops there, the appends before it stay written. */
  async appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    assertAppendableMany(appends);
    // Key rows belong in one PostgreSQL transaction with their events: never dropped silently here.
    if (appends.some((part) => part.keyRows !== undefined)) throw new RangeError('EventStoreDB cannot write key rows in the transaction of an append: store them first');
    if (appends.some((part) => part.expectedEventId !== undefined)) throw new RangeError('EventStoreDB cannot condition an append on an expected event id: read the stream first');
    const results: AppendResult[] = [];
    for (const part of appends) results.push(await this.append(part.streamId, part.events, { expectedRevision: part.expectedRevision }));
    return results;
  }

  async append(streamId: string, events: readonly EventToAppend[], options: AppendOptions): Promise<AppendResult> {
    assertAppendable(streamId, events, options.expectedRevision);
    // Never dropped silently: an append that relied on it would succeed on a stream that lost events.
    if (options.expectedEventId !== undefined) throw new RangeError('EventStoreDB cannot condition an append on an expected event id: read the stream first');
    const expected = options.expectedRevision;
    this.assertOpen();
    const data = events.map((event) => jsonEvent({ id: event.id, type: event.type, data: event.data, metadata: event.metadata ?? {} }));
    let result: EsdbAppendResult;
    try {
      result = await withTimeout(this.client.appendToStream(streamId, data, { expectedRevision: expected, deadline: APPEND_DEADLINE_MS }), APPEND_TIMEOUT_MS, 'append');
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) throw toWrongExpectedRevision(streamId, expected, error.actualVersion);
      // A tombstoned stream refuses every append; a soft-deleted one refuses `stream_exists`.
      if (error instanceof EsdbStreamDeletedError) throw new StreamDamagedError(streamId, expected === 'stream_exists' ? 'deleted' : 'tombstoned', 'the append was refused');
      throw toStoreError(error);
    }
    if (!result.success) throw new Error('invariant: a refused append resolved instead of throwing');
    // `no_stream` is accepted on a soft-deleted stream, which it recreates after its hidden events.
    if (expected === 'no_stream' && result.nextExpectedRevision !== BigInt(events.length - 1)) {
      throw new StreamDamagedError(streamId, 'deleted', `an append to no stream landed at revision ${result.nextExpectedRevision}`);
    }
    // An idempotent retry of an append can come back without a position: look the last event up.
    const position =
      result.position !== undefined && result.position.commit <= MAX_POSITION ? result.position.commit : await this.positionOfRevision(streamId, result.nextExpectedRevision);
    if (position > this.knownHead) this.knownHead = position;
    return { nextExpectedRevision: result.nextExpectedRevision, position };
  }

  private async positionOfRevision(streamId: string, revision: bigint): Promise<bigint> {
    const [event] = await this.readStream(streamId, { fromRevision: revision, maxCount: 1 });
    if (event === undefined || event.revision !== revision) {
      throw new Error(`invariant: revision ${revision} of ${streamId} was acknowledged but cannot be read`);
    }
    return event.position;
  }

  async readStream(streamId: string, options: ReadStreamOptions): Promise<RecordedEvent[]> {
    assertReadCount(options.maxCount);
    if (options.fromRevision !== undefined && options.fromRevision < 0n) throw new RangeError(`invalid revision ${options.fromRevision}`);
    this.assertOpen();
    const backwards = options.direction === 'backwards';
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision ?? (backwards ? END : START),
        maxCount: options.maxCount,
      });
      await drain(
        read,
        (resolved) => {
          if (resolved.event !== undefined) events.push(toRecordedEvent(resolved.event));
          return true;
        },
        READ_TIMEOUT_MS,
      );
    } catch (error) {
      if (error instanceof StreamNotFoundError) {
        await this.assertNotSoftDeleted(streamId);
        return [];
      }
      if (error instanceof EsdbStreamDeletedError) throw new StreamDamagedError(streamId, 'tombstoned', 'a read was refused');
      throw toStoreError(error);
    }
    if (!backwards) this.assertUntruncated(streamId, options.fromRevision ?? 0n, events);
    return events;
  }

  /**
   * A forward read from revision r of a stream that exists returns r first, unless stream metadata
   * hides it (`$maxCount`, `$maxAge`, `$tb`, or a scavenge after them): then the server starts at
   * its first readable revision, or answers nothing at all when every event is hidden (a stream
   * that does not exist is "not found" instead).
   */
  private assertUntruncated(streamId: string, from: bigint, events: readonly RecordedEvent[]): void {
    const [first] = events;
    if (first !== undefined && first.revision !== from) {
      throw new StreamDamagedError(streamId, 'truncated', `a read from revision ${from} started at revision ${first.revision}`);
    }
    if (first === undefined && from === 0n) {
      throw new StreamDamagedError(streamId, 'truncated', 'the stream exists but none of its events can be read');
    }
  }

  /** "Not found" is also what a soft-deleted stream reads as: its metadata (`$tb`) tells the two apart. */
  private async assertNotSoftDeleted(streamId: string): Promise<void> {
    let metadata: { truncateBefore?: unknown } | undefined;
    try {
      metadata = (await withTimeout(this.client.getStreamMetadata(streamId), READ_TIMEOUT_MS, 'read of stream metadata')).metadata;
    } catch (error) {
      throw toStoreError(error);
    }
    if (metadata?.truncateBefore !== undefined) throw new StreamDamagedError(streamId, 'deleted', 'it reads as not found and its metadata truncates it');
  }

  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    assertReadCount(options.maxCount);
    if (options.fromPosition !== undefined && options.fromPosition < 0n) throw new RangeError(`invalid position ${options.fromPosition}`);
    this.assertOpen();
    return this.scanAll({ direction: options.direction ?? 'forwards', fromPosition: options.fromPosition, filter: options.filter, maxCount: options.maxCount });
  }

  /**
   * Pages through $all, keeping the events that pass the filter, until `maxCount` are found or the
   * log ends. Forward reads start inclusive at the given position, backward reads exclusive; the
   * boundary event of each page is recognised by its exact (commit, prepare) and skipped.
   */
  private async scanAll(options: ScanOptions): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const from = options.fromPosition;
    const found: RecordedEvent[] = [];
    let last: Position | undefined;
    let start: ReadPosition = from === undefined ? (backwards ? END : START) : from === 0n && !backwards ? START : logPosition(from);
    for (;;) {
      const pageStart = last;
      let received = 0;
      let done = false;
      try {
        const read = this.client.readAll({ direction: backwards ? BACKWARDS : FORWARDS, fromPosition: start, maxCount: READ_ALL_PAGE_EVENTS });
        await drain(
          read,
          (resolved: AllStreamResolvedEvent) => {
            received += 1;
            const event = resolved.event;
            if (event === undefined) return true;
            if (last !== undefined && (backwards ? compareLogPositions(event.position, last) >= 0 : compareLogPositions(event.position, last) <= 0)) {
              return true;
            }
            last = event.position;
            if (from !== undefined && (backwards ? event.position.commit >= from : event.position.commit <= from)) return true;
            if (backwards && options.downTo !== undefined && event.position.commit <= options.downTo) {
              done = true;
              return false;
            }
            if (!passesFilter(event, options.filter)) return true;
            found.push(toRecordedEvent(event));
            done = found.length >= options.maxCount;
            return !done;
          },
          READ_TIMEOUT_MS,
        );
      } catch (error) {
        throw toStoreError(error);
      }
      if (done || received < READ_ALL_PAGE_EVENTS) return found;
      if (last === undefined || (pageStart !== undefined && compareLogPositions(last, pageStart) === 0)) {
        throw new Error('invariant: a full page of $all did not advance the read position');
      }
      start = last;
    }
  }

  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    if (options.fromPosition !== undefined && options.fromPosition < 0n) throw new RangeError(`invalid position ${options.fromPosition}`);
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the subscription's generator below is a function of its own
    const store = this;
    const filter = options.filter;
    const serverFilter = serverSideFilter(filter);
    // The exact position of the last event received, delivered or filtered out: a resubscription
    // resumes after it, so a dropped connection neither skips nor repeats an event.
    let resumeAfter: Position | undefined = options.fromPosition === undefined ? undefined : logPosition(options.fromPosition);
    let lastDelivered = options.fromPosition;
    let closed = false;
    let current: AllStreamSubscription | undefined;
    let wake: (() => void) | undefined;

    const pause = (ms: number) =>
      new Promise<void>((resolvePause) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          wake = undefined;
          resolvePause();
        }
        wake = done;
      });

    async function* iterate(): AsyncGenerator<RecordedEvent> {
      let backoffMs = RESUBSCRIBE_BACKOFF_MIN_MS;
      try {
        while (!closed && !store.closed) {
          const subscription = store.client.subscribeToAll({
            fromPosition: resumeAfter === undefined || resumeAfter.commit === 0n ? START : resumeAfter,
            filter: serverFilter,
            resolveLinkTos: false,
          });
          // A late error after iteration stopped would otherwise be an unhandled 'error' event.
          subscription.on('error', ignore);
          subscription.once('confirmation', () => {
            backoffMs = RESUBSCRIBE_BACKOFF_MIN_MS;
          });
          current = subscription;
          let failure: Error | undefined;
          try {
            for await (const resolved of subscription as AsyncIterable<AllStreamResolvedEvent>) {
              const event = resolved.event;
              if (event === undefined) continue;
              // The server starts after the position it is given; this only guards a resubscription.
              if (resumeAfter !== undefined && compareLogPositions(event.position, resumeAfter) <= 0) continue;
              resumeAfter = event.position;
              if (!passesFilter(event, filter)) continue;
              const recorded = toRecordedEvent(event);
              if (lastDelivered !== undefined && recorded.position <= lastDelivered) {
                throw new Error(`invariant: subscription position went backwards (${recorded.position} after ${lastDelivered})`);
              }
              lastDelivered = recorded.position;
              yield recorded;
              if (closed) return;
            }
          } catch (error) {
            failure = asError(error);
          } finally {
            current = undefined;
            subscription.destroy();
            void subscription.unsubscribe().catch(ignore);
          }
          if (closed || store.closed) return;
          if (failure !== undefined && !isUnavailable(failure)) throw failure;
          // The connection dropped, the node restarted or lost leadership, or the server ended the
          // call: resume after the last event received, after a bounded backoff.
          await pause(backoffMs);
          backoffMs = Math.min(backoffMs * 2, RESUBSCRIBE_BACKOFF_MAX_MS);
        }
      } finally {
        store.subscriptions.delete(handle);
      }
    }

    const generator = iterate();
    const handle: Subscription = {
      [Symbol.asyncIterator]: () => generator,
      close: async () => {
        if (!closed) {
          closed = true;
          wake?.();
          // Ends a pending read of the current subscription at once, so that return() is not held up.
          current?.destroy();
        }
        await generator.return(undefined);
      },
    };
    this.subscriptions.add(handle);
    return handle;
  }

  async headPosition(): Promise<bigint> {
    this.assertOpen();
    const [newest] = await this.scanAll({ direction: 'backwards', maxCount: 1, downTo: this.knownHead });
    if (newest !== undefined && newest.position > this.knownHead) this.knownHead = newest.position;
    return this.knownHead;
  }

  async ping(): Promise<void> {
    this.assertOpen();
    try {
      await drain(this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }), () => false, PING_TIMEOUT_MS);
    } catch (error) {
      throw toStoreError(error);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((subscription) => subscription.close()));
    await this.client.dispose();
  }

  private assertOpen(): void {
    if (this.closed) throw new EventStoreUnavailableError('the EventStoreDB connection is closed');
  }
}
