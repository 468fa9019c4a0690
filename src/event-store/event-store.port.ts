/**
 * The event store port: one interface, two adapters (`postgres`, `esdb`), one contract suite run
 * against both (test/event-store/event-store.contract.ts).
 *
 * Revisions are per stream and start at 0. Positions are global, totally ordered and strictly
 * increasing in delivery order, but not dense: callers must never compute counts from them.
 */

import type { LogHoldback } from './postgres-log-holdback.js';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** What an append expects of the stream's current state. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

export interface AppendOptions {
  readonly expectedRevision: ExpectedRevision;
  /**
   * The id of the event the stream holds at `expectedRevision` (a revision, not a code): the append
   * is refused as for a wrong revision, with `actual` equal to the expected revision, when the
   * stream has another event there (it lost events and was written again up to that revision).
   * Only where `expectedEventIds` is `checked`; the other stores refuse an append that carries one.
   */
  readonly expectedEventId?: string;
}

export interface EventToAppend {
  /** Caller-chosen id (a UUID), so a retried append can be recognised. */
  readonly id: string;
  readonly type: string;
  readonly data: JsonObject;
  readonly metadata?: JsonObject;
}

export interface RecordedEvent {
  readonly id: string;
  readonly streamId: string;
  readonly type: string;
  readonly revision: bigint;
  readonly position: bigint;
  readonly data: JsonObject;
  readonly metadata: JsonObject;
  readonly createdAt: Date;
}

export interface AppendResult {
  /** The revision of the last event written: pass it as the next append's expected revision. */
  readonly nextExpectedRevision: bigint;
  /** The global position of the last event written. */
  readonly position: bigint;
}

export interface ReadStreamOptions {
  readonly direction?: 'forwards' | 'backwards';
  /** Inclusive. Defaults to the start (forwards) or the end (backwards). */
  readonly fromRevision?: bigint;
  /** Bounded: at most MAX_READ_COUNT. */
  readonly maxCount: number;
}

export interface ReadAllOptions {
  readonly direction?: 'forwards' | 'backwards';
  /** Exclusive. Forwards defaults to the start, backwards to the end. */
  readonly fromPosition?: bigint;
  readonly maxCount: number;
  readonly filter?: EventFilter;
}

/** Both lists are alternatives: an event passes when its stream's category OR its type is listed. Empty lists mean "everything". */
export interface EventFilter {
  /** Stream categories: the part of the stream id before the first '-' (`wallet` for `wallet-abc.test`). */
  readonly streamCategories?: readonly string[];
  readonly eventTypes?: readonly string[];
}

export interface SubscribeOptions {
  /** Exclusive: the last position the subscriber has processed; `undefined` starts from the beginning. */
  readonly fromPosition?: bigint;
  readonly filter?: EventFilter;
}

/**
 * A catch-up subscription to all streams: delivers stored events after `fromPosition`, then turns
 * live. Each event is delivered once, in position order. Iterate with `for await`; `close()` ends the
 * iteration. A dropped connection is resumed from the last delivered position inside the adapter.
 */
export interface Subscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

/** One stream's part of a multi-stream append. */
export interface StreamAppend {
  readonly streamId: string;
  readonly events: readonly EventToAppend[];
  readonly expectedRevision: ExpectedRevision;
  /** As AppendOptions.expectedEventId. */
  readonly expectedEventId?: string;
  /**
   * Rows of the data-protection key tables (never events) to write in the append's own
   * transaction, all or nothing with its write-set: only where `multiStreamAppends` is `atomic`
   * (PostgreSQL); the EventStoreDB adapter refuses an append that carries them.
   */
  readonly keyRows?: KeyRows;
}

/**
 * One verification's rows of the key tables: its wrapped data key (`verification_keys`; null when
 * only tokens are added) and its blind-index tokens (`verification_subjects`). A data key rides only
 * on the append that creates its verification stream (expected revision `no_stream`), so that no
 * event in the log is sealed under an earlier key of the same reference.
 */
export interface KeyRows {
  readonly reference: string;
  readonly organizationId: string;
  readonly environment: string;
  readonly wrappedKey: string | null;
  readonly tokens: readonly string[];
}

/**
 * How `appendMany` writes its streams:
 * - `atomic`: in one transaction, all or nothing. A stream that does not match its expected
 *   revision refuses the whole append (WrongExpectedRevisionError naming that stream) and nothing
 *   of it is written (PostgreSQL).
 * - `in_order`: one append after the other, in the order given; the first refusal (or failure)
 *   stops there, and the appends before it stay written (EventStoreDB, which has no multi-stream
 *   transaction). Callers that need all-or-nothing check this flag and keep their own sequence
 *   and recovery when it is `in_order`.
 */
export type MultiStreamAppends = 'atomic' | 'in_order';

/**
 * Whether an append can be conditioned on the id of the event at its expected revision
 * (AppendOptions.expectedEventId): `checked` inside the append (PostgreSQL), or `unsupported`
 * (EventStoreDB conditions appends on the revision only: callers read the event instead).
 */
export type ExpectedEventIds = 'checked' | 'unsupported';

/**
 * What a stream shorter than an acknowledged append means: `lost` where every read sees every
 * acknowledged append (PostgreSQL: the stream really lost events, a failover to an asynchronous
 * replica or a restore), `not_yet_readable` where reads may trail acknowledged appends (EventStoreDB:
 * a node's index behind its writes, a leader change): the reader waits for it instead.
 */
export type ShortStreams = 'lost' | 'not_yet_readable';

export interface EventStore {
  readonly kind: 'postgres' | 'esdb';
  readonly multiStreamAppends: MultiStreamAppends;
  readonly expectedEventIds: ExpectedEventIds;
  readonly shortStreams: ShortStreams;
  /** Reads of the log in SQL, where the log is a table of the read models' database (PostgreSQL); absent otherwise. */
  readonly logReader?: LogReader;
  append(streamId: string, events: readonly EventToAppend[], options: AppendOptions): Promise<AppendResult>;
  /**
   * Appends to several distinct streams, each with its own expected revision, as
   * `multiStreamAppends` says; one result per append, in order. At most MAX_APPEND_COUNT events in
   * all.
   */
  appendMany(appends: readonly StreamAppend[]): Promise<AppendResult[]>;
  /** A missing stream reads as an empty list. */
  readStream(streamId: string, options: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribeToAll(options?: SubscribeOptions): Subscription;
  /** The position of the newest event visible to subscribers, or 0n for an empty log. */
  headPosition(): Promise<bigint>;
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const EVENT_STORE = Symbol('EventStore');

// ---- The log reader: a capability of the PostgreSQL adapter ----

/**
 * What a store whose log is a table of the read models' own database can do besides the port:
 * read the log with SQL in that database. The PostgreSQL adapter offers it as
 * `EventStore.logReader`; EventStoreDB does not. Callers ask for it (`store.logReader?.…`), never for
 * the store's kind, and fall back to the port's reads without it. Every SQL statement naming the
 * `events` table lives under src/event-store/ (test/architecture/store-port.spec.ts checks it).
 */
export interface LogReader {
  /** One page of a stream, forwards, decoded with less work than `readStream` (postgres-stream-pages.ts). */
  readonly streamPage: StreamPageReader;
  /** A stream from a revision to its end in one COPY (postgres-stream-pages.ts). */
  readonly streamPages: StreamPagesReader;
  /** The COPY reader with a sidecar working on each chunk's rows (the audit's chain hash worker). */
  streamPagesWith(sidecar: CopyRowsSidecar): SidecarPagesReader;
  /** Pages of the given categories after a position, below the visible bound, with only what projections read (postgres-log-pages.ts). */
  categoryPages(categories: readonly string[], chunkEvents?: number): CategoryPageReader;
  /** The planner's estimate of the categories' events after `from` (a progress bar's total); null when it has none. */
  estimateEventsAfter(categories: readonly string[], from: bigint): Promise<number | null>;
  /** The categories' visible events after `from`; null when there are `limit` or more. */
  countVisibleEventsAfter(categories: readonly string[], from: bigint, limit: number): Promise<number | null>;
  /** The categories' events after `from` up to `newest`, visible or not, at most `limit` (a projection's lag). */
  pendingEvents(categories: readonly string[], window: PendingWindow): Promise<PendingEvents>;
  /** The log's visible bound and what holds it back (postgres-log-holdback.ts). */
  holdback(): Promise<LogHoldback>;
  /** The verification events still holding a personal field in plain text (postgres-legacy-events.ts). */
  readonly legacyEvents: LegacyEventLog;
}

/** Runs one statement where the caller says (a session, a transaction): its rows. */
export type SqlRunner = <T = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<T[]>;

/**
 * One page of a stream, forwards: the same events as the adapter's `readStream(streamId, {
 * fromRevision, maxCount })`.
 */
export type StreamPageReader = (streamId: string, fromRevision: bigint, maxCount: number) => Promise<RecordedEvent[]>;

/**
 * A stream from a revision to its end, as pages of at most `pageSize` events, oldest first.
 * Breaking off the iteration ends the read.
 */
export type StreamPagesReader = (streamId: string, fromRevision: bigint, pageSize: number) => AsyncIterable<RecordedEvent[]>;

/**
 * Work done on each COPY chunk's whole rows beside the reader, for instance on a worker thread:
 * `submit` receives the rows' bytes (COPY text format, each row ending in a newline) as soon as
 * they arrive and answers, in a string, `width` characters per row, in row order.
 */
export interface CopyRowsSidecar {
  readonly width: number;
  /** `rows` is the reader's buffer, reused once this returns: what the sidecar works on later, it copies first. */
  submit(streamId: string, rows: Uint8Array): Promise<string>;
}

/** A page of events with the sidecar's characters for them (`width` per event, in the same order). */
export interface SidecarPage {
  readonly events: RecordedEvent[];
  readonly side: string;
}

export type SidecarPagesReader = (streamId: string, fromRevision: bigint, pageSize: number) => AsyncIterable<SidecarPage>;

/** Reads one page of a projection's events after a position: at most `maxCount`, in position order. */
export type CategoryPageReader = (from: bigint, maxCount: number) => Promise<RecordedEvent[]>;

export interface PendingWindow {
  /** Exclusive. */
  readonly from: bigint;
  /** Inclusive: the newest event written. */
  readonly newest: bigint;
  /** The visible head: events at or below it are counted apart as `settled`. */
  readonly head: bigint;
  readonly limit: number;
}

export interface PendingEvents {
  readonly count: number;
  readonly oldest: Date | null;
  /** Of those, at or below the visible head. */
  readonly settled: number;
  readonly settledOldest: Date | null;
}

/** A verification event whose personal field is plain. */
export interface UnsealedEvent {
  readonly position: string;
  readonly streamId: string;
  readonly type: 'VerificationRequested' | 'VerificationCompleted';
  readonly data: JsonObject;
}

/** A personal field's sealed value, to be written into the event at `position`. */
export interface SealedField {
  readonly position: string;
  readonly field: string;
  readonly sealed: JsonObject;
}

/** The legacy events' side of `npm run maintenance -- encrypt-legacy-events` (src/maintenance/legacy-events.ts). */
export interface LegacyEventLog {
  /** An index probe: true while one is left. */
  hasUnsealed(): Promise<boolean>;
  countUnsealed(): Promise<number>;
  /** In position order. */
  unsealedAfter(position: string, limit: number): Promise<UnsealedEvent[]>;
  /** The data of the stream's VerificationRequested at revision 0. */
  requestOf(streamId: string): Promise<JsonObject | undefined>;
  /** Per stream, the field of its first event of `type` when that field is sealed. */
  sealedFieldsOf(streamIds: readonly string[], type: UnsealedEvent['type'], field: string): Promise<Map<string, JsonObject>>;
  /** Writes the sealed fields in place, in the caller's transaction; a field sealed already is left. */
  sealInPlace(run: SqlRunner, sealed: readonly SealedField[]): Promise<void>;
  /** OrganizationRegistered events whose email is not sealed yet: it does not start with `sealedPrefix` (the database filters them). */
  clearOrganizationEmails(sealedPrefix: string): Promise<{ position: string; organizationId: string; email: string }[]>;
  /** Replaces an OrganizationRegistered event's email by its sealed form (the append-only trigger allows that one change). */
  sealOrganizationEmail(position: string, sealed: string): Promise<void>;
}

/** Limits on every read and append, so that no caller can ask the store for an unbounded page. */
export const MAX_READ_COUNT = 10_000;
export const MAX_APPEND_COUNT = 1_000;

export class WrongExpectedRevisionError extends Error {
  readonly code = 'wrong_expected_revision';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /**
     * The stream's current revision, or 'no_stream'. Equal to `expected` when the append was
     * refused for its expected event id: the stream has that revision, with another event there.
     */
    readonly actual: bigint | 'no_stream',
  ) {
    super(`Wrong expected revision on ${streamId}: expected ${String(expected)}, actual ${String(actual)}`);
  }
}

export class EventStoreUnavailableError extends Error {
  readonly code = 'event_store_unavailable';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A stream that lost events this service wrote: deleted (soft: its events hidden, the next append
 * would recreate it numbering on), tombstoned (gone for good), or truncated (`$maxCount`, `$maxAge`
 * or `$tb` metadata, or a scavenge after them: a forward read no longer starts at its first
 * revision). Only an operator can do that, on EventStoreDB; this service never deletes or
 * truncates a stream. Nothing may be decided on what is left (a wallet folded without its first
 * events has the wrong balance), so every read or append of such a stream fails with this error.
 */
export class StreamDamagedError extends Error {
  readonly code = 'stream_damaged';
  constructor(
    readonly streamId: string,
    readonly damage: 'deleted' | 'tombstoned' | 'truncated',
    detail: string,
  ) {
    super(`Stream ${streamId} is ${damage} on the event store (${detail}); it must be restored before it is used again`);
  }
}

export function streamCategory(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash === -1 ? streamId : streamId.slice(0, dash);
}

export function matchesFilter(event: Pick<RecordedEvent, 'streamId' | 'type'>, filter: EventFilter | undefined): boolean {
  if (filter === undefined) return true;
  const categories = filter.streamCategories ?? [];
  const types = filter.eventTypes ?? [];
  if (categories.length === 0 && types.length === 0) return true;
  return categories.includes(streamCategory(event.streamId)) || types.includes(event.type);
}

export function assertReadCount(maxCount: number): void {
  if (!Number.isInteger(maxCount) || maxCount < 1 || maxCount > MAX_READ_COUNT) {
    throw new RangeError(`maxCount must be an integer from 1 to ${MAX_READ_COUNT}, got ${maxCount}`);
  }
}

/** The checks of assertAppendable on each part, plus: at least one part, distinct streams, the event bound over all parts. */
export function assertAppendableMany(appends: readonly StreamAppend[]): void {
  if (appends.length === 0) throw new RangeError('a multi-stream append takes at least one stream');
  const streams = new Set<string>();
  let events = 0;
  for (const part of appends) {
    assertAppendable(part.streamId, part.events, part.expectedRevision, part.expectedEventId);
    if (part.keyRows?.wrappedKey != null && part.expectedRevision !== 'no_stream') {
      throw new RangeError(`a data key is written only with the append that creates its stream, not with one to ${part.streamId} expecting ${String(part.expectedRevision)}`);
    }
    if (streams.has(part.streamId)) throw new RangeError(`a multi-stream append names ${part.streamId} twice`);
    streams.add(part.streamId);
    events += part.events.length;
  }
  if (events > MAX_APPEND_COUNT) throw new RangeError(`an append takes 1 to ${MAX_APPEND_COUNT} events, got ${events}`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The same checks on both adapters: EventStoreDB needs UUID ids, and `$` types are system events that readers drop. */
export function assertAppendable(streamId: string, events: readonly EventToAppend[], expectedRevision: ExpectedRevision, expectedEventId?: string): void {
  if (streamId.length === 0 || streamId.startsWith('$')) throw new RangeError(`invalid stream id "${streamId}"`);
  if (expectedEventId !== undefined && (typeof expectedRevision !== 'bigint' || !UUID.test(expectedEventId))) {
    throw new RangeError(`an expected event id is a UUID, given with an expected revision number (got "${expectedEventId}" at ${String(expectedRevision)})`);
  }
  if (events.length === 0 || events.length > MAX_APPEND_COUNT) {
    throw new RangeError(`an append takes 1 to ${MAX_APPEND_COUNT} events, got ${events.length}`);
  }
  if (typeof expectedRevision === 'bigint' && expectedRevision < 0n) throw new RangeError(`invalid expected revision ${expectedRevision}`);
  for (const event of events) {
    if (!UUID.test(event.id)) throw new RangeError(`event ids must be UUIDs, got "${event.id}"`);
    if (event.type.length === 0 || event.type.startsWith('$')) throw new RangeError(`invalid event type "${event.type}"`);
  }
}
