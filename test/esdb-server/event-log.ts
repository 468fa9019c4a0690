/**
 * The in-memory transaction log of the EventStoreDB test server (test support only).
 *
 * Modelled on what a KurrentDB node does (kurrent-io/KurrentDB: StorageWriterService, IndexWriter
 * .CheckCommit, IndexReader, AllReader, RequestManagerBase, ResolvedEvent.CalculatePosition):
 * - every event of an append is its own "self-committed" prepare record, written at the log's
 *   current end; the log then grows by the record's size in bytes. An event's position in $all is
 *   (commit, prepare) = (its record's log position, the same), strictly increasing in append order,
 *   and the events of one multi-event append do NOT share a commit position;
 * - positions are byte offsets: increasing, never dense;
 * - WRITTEN is not READABLE. Appends are checked (expected revision, idempotency, deletion) against
 *   everything written, as the writer's pre-index does; reads, subscriptions and $all see only what
 *   the index has caught up with. The index follows the log in order, `readLagMs` behind it (0: at
 *   once). A node acknowledges an append only once its events are indexed, so a writer reads its
 *   own acknowledged write; what lags is everyone else's view of a write that is not acknowledged
 *   yet, e.g. the winner's event when the loser's append was refused with "wrong expected version";
 * - stream metadata (`$maxCount`, `$maxAge`, `$tb`) limits what a stream read returns, never $all;
 *   a soft delete is the metadata `$tb = long.MaxValue`, undone by the next append; a tombstone is a
 *   `$streamDeleted` record at revision long.MaxValue, for ever. What they hide stays in $all until
 *   a scavenge removes it.
 */
import { randomUUID } from 'node:crypto';

export type ExpectedRevision =
  { readonly kind: 'any' } | { readonly kind: 'no_stream' } | { readonly kind: 'stream_exists' } | { readonly kind: 'revision'; readonly revision: bigint };

export interface ProposedEvent {
  /** A lower-case canonical UUID. */
  readonly id: string;
  readonly type: string;
  readonly isJson: boolean;
  readonly data: Uint8Array;
  readonly metadata: Uint8Array;
}

export interface LogRecord extends ProposedEvent {
  /** Commit and prepare position alike: the record's byte offset in the log. */
  readonly position: bigint;
  /** The record's byte offset just past its end (where the next record starts). */
  readonly postPosition: bigint;
  /** Its index in the log (the order of $all). */
  readonly sequence: number;
  readonly streamId: string;
  /** The event number; a tombstone's is DELETED_STREAM. */
  readonly revision: bigint;
  /** .NET ticks (100 ns) since the Unix epoch, as the server sends them in the `created` metadata. */
  readonly createdTicks: bigint;
  readonly createdMs: number;
}

/** What an append decided, before anything is indexed. */
export type AppendOutcome =
  | {
      readonly kind: 'success';
      /** The stream's revision after the append, or undefined when it still has no event. */
      readonly currentRevision: bigint | undefined;
      /** The last event's position; undefined when the append wrote nothing. */
      readonly position: bigint | undefined;
      readonly idempotent: boolean;
      /** The sequence of the last record this outcome depends on (acknowledged once it is indexed); -1 for none. */
      readonly lastSequence: number;
    }
  | { readonly kind: 'wrong_expected_version'; readonly currentRevision: bigint | undefined }
  | { readonly kind: 'stream_deleted' };

export type DeleteOutcome =
  | { readonly kind: 'success'; readonly position: bigint; readonly lastSequence: number }
  | { readonly kind: 'wrong_expected_version'; readonly currentRevision: bigint | undefined }
  | { readonly kind: 'stream_deleted' };

/** What a stream read may return, by the rules a node's IndexReader applies. */
export type StreamView =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'deleted' }
  | {
      readonly kind: 'readable';
      /** Lowest and highest revision a read may return (first > last: nothing). */
      readonly first: bigint;
      readonly last: bigint;
      /** The readable event at `revision` (undefined: truncated, expired or scavenged). */
      at(revision: bigint): LogRecord | undefined;
    };

/** KurrentDB's EventNumber.DeletedStream (long.MaxValue): a tombstone's revision and a soft delete's `$tb`. */
export const DELETED_STREAM = (1n << 63n) - 1n;
/** The real server keeps the ids of recently committed events in a bounded memory cache: idempotency of `any`/`stream_exists` appends is best effort. */
export const COMMITTED_ID_CACHE_ENTRIES = 100_000;
/** Fixed bytes of a v2 prepare record besides its variable parts (length prefix and suffix, header, ids, timestamps). */
const RECORD_OVERHEAD_BYTES = 90n;
const TICKS_PER_MS = 10_000n;
const METADATA_EVENT_TYPE = '$metadata';
const TOMBSTONE_EVENT_TYPE = '$streamDeleted';

const encoder = new TextEncoder();

function recordSize(streamId: string, event: ProposedEvent): bigint {
  return RECORD_OVERHEAD_BYTES + BigInt(encoder.encode(streamId).length + encoder.encode(event.type).length + event.data.length + event.metadata.length);
}

export function isMetastream(streamId: string): boolean {
  return streamId.startsWith('$$');
}

export function metastreamOf(streamId: string): string {
  return `$$${streamId}`;
}

interface StreamMetadata {
  readonly maxCount?: bigint;
  /** Seconds. */
  readonly maxAge?: bigint;
  readonly truncateBefore?: bigint;
}

/** A metastream holds only its newest event (KurrentDB's metastream metadata is `$maxCount: 1`). */
const METASTREAM_METADATA: StreamMetadata = { maxCount: 1n };

function integer(value: unknown): bigint | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value);
  return undefined;
}

function parseRawMetadata(record: LogRecord | undefined): Record<string, unknown> {
  if (record === undefined || !record.isJson) return {};
  try {
    const parsed = JSON.parse(Buffer.from(record.data).toString('utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function toMetadata(raw: Record<string, unknown>): StreamMetadata {
  // A $tb beyond long.MaxValue is not a number a node can hold; clamp it to "deleted".
  const tb = integer(raw.$tb);
  return { maxCount: integer(raw.$maxCount), maxAge: integer(raw.$maxAge), truncateBefore: tb === undefined ? undefined : tb > DELETED_STREAM ? DELETED_STREAM : tb };
}

interface StreamEntry {
  /** Indexed by revision: revisions are dense, a soft delete does not restart them. */
  readonly records: LogRecord[];
  tombstone?: LogRecord;
}

export interface EventLogOptions {
  /** How far the index (what reads see) trails the written log. */
  readonly readLagMs?: number;
}

export class EventLog {
  private readonly records: LogRecord[] = [];
  private readonly streams = new Map<string, StreamEntry>();
  /** Event id -> where it was committed; insertion order is age, the oldest is evicted first. */
  private readonly committedIds = new Map<string, LogRecord>();
  /** Sequences removed by a scavenge. */
  private readonly scavenged = new Set<number>();
  private end = 0n;
  /** Records [0, indexed) are visible to reads. */
  private indexed = 0;
  /** When each record not yet indexed becomes visible (ms since the epoch), by sequence. */
  private readonly indexDue = new Map<number, number>();
  private indexTimer: NodeJS.Timeout | undefined;
  private waiters = new Set<() => void>();
  private lagMs: number;

  constructor(options: EventLogOptions = {}) {
    this.lagMs = options.readLagMs ?? 0;
  }

  get readLagMs(): number {
    return this.lagMs;
  }

  /** Later writes are indexed `ms` after they are written (earlier ones keep their due time; the index stays in log order). */
  setReadLag(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('readLagMs must be a non-negative number');
    this.lagMs = ms;
  }

  /** Number of records written (indexed or not). */
  get writtenCount(): number {
    return this.records.length;
  }

  /** Number of records reads may see: a prefix of the log. */
  get indexedCount(): number {
    return this.indexed;
  }

  /** The position just past the newest indexed record (a valid read position). */
  get indexedEndPosition(): bigint {
    return this.indexed === 0 ? 0n : (this.records[this.indexed - 1] as LogRecord).postPosition;
  }

  // ---------------------------------------------------------------- writes (against everything written)

  append(streamId: string, expected: ExpectedRevision, events: readonly ProposedEvent[], now: Date = new Date()): AppendOutcome {
    const entry = this.streams.get(streamId);
    if (entry?.tombstone !== undefined && events.length > 0) return { kind: 'stream_deleted' };
    const decision = this.check(streamId, entry, expected, events);
    if (decision.kind !== 'write') return decision.outcome;
    const current = this.writtenLast(entry);
    if (events.length === 0) return { kind: 'success', currentRevision: current < 0n ? undefined : current, position: undefined, idempotent: false, lastSequence: -1 };

    // Writing to the metastream of a soft-deleted stream undeletes that stream too (SoftUndeleteMetastream).
    const undeletesOriginal = isMetastream(streamId) && this.isSoftDeleted(streamId.slice(2));
    const target = this.entry(streamId);
    let last: LogRecord | undefined;
    for (const event of events) last = this.write(streamId, target, BigInt(target.records.length), event, now);
    if (decision.softDeleted) this.softUndelete(streamId, current + 1n, now);
    if (undeletesOriginal) {
      const original = streamId.slice(2);
      this.softUndelete(original, this.writtenLast(this.streams.get(original)) + 1n, now);
    }
    const written = last as LogRecord;
    return { kind: 'success', currentRevision: written.revision, position: written.position, idempotent: false, lastSequence: this.records.length - 1 };
  }

  /**
   * Deletes a stream: soft (the metadata `$tb = long.MaxValue`, reads answer "not found", the next
   * append recreates it, numbering on) or hard (a tombstone: reads and appends answer "deleted" for
   * ever). The expected revision is checked as for an append of nothing.
   */
  delete(streamId: string, expected: ExpectedRevision, hard: boolean, now: Date = new Date()): DeleteOutcome {
    const entry = this.streams.get(streamId);
    if (entry?.tombstone !== undefined) return { kind: 'stream_deleted' };
    const decision = this.check(streamId, entry, expected, []);
    if (decision.kind !== 'write') {
      const outcome = decision.outcome;
      if (outcome.kind === 'success') throw new Error('invariant: an empty write cannot be idempotent');
      return outcome;
    }
    const current = this.writtenLast(entry);
    if (hard) {
      const target = this.entry(streamId);
      const tombstone = this.write(
        streamId,
        target,
        DELETED_STREAM,
        { id: randomUUID(), type: TOMBSTONE_EVENT_TYPE, isJson: false, data: new Uint8Array(), metadata: new Uint8Array() },
        now,
      );
      target.tombstone = tombstone;
      return { kind: 'success', position: tombstone.position, lastSequence: tombstone.sequence };
    }
    const metastream = metastreamOf(streamId);
    if (current < 0n && this.writtenLast(this.streams.get(metastream)) < 0n) {
      // A stream that never existed cannot be soft-deleted.
      return { kind: 'wrong_expected_version', currentRevision: undefined };
    }
    const record = this.writeMetadata(streamId, { $tb: Number(DELETED_STREAM) }, now, true);
    return { kind: 'success', position: record.position, lastSequence: record.sequence };
  }

  private entry(streamId: string): StreamEntry {
    let entry = this.streams.get(streamId);
    if (entry === undefined) {
      entry = { records: [] };
      this.streams.set(streamId, entry);
    }
    return entry;
  }

  private write(streamId: string, target: StreamEntry, revision: bigint, event: ProposedEvent, now: Date): LogRecord {
    const size = recordSize(streamId, event);
    const record: LogRecord = {
      ...event,
      streamId,
      revision,
      position: this.end,
      postPosition: this.end + size,
      sequence: this.records.length,
      createdTicks: BigInt(now.getTime()) * TICKS_PER_MS,
      createdMs: now.getTime(),
    };
    this.end += size;
    this.records.push(record);
    if (revision !== DELETED_STREAM) target.records.push(record);
    this.remember(record);
    this.scheduleIndex(record.sequence, now.getTime() + this.lagMs);
    return record;
  }

  /** Writes `$metadata` to the stream's metastream; `exact` keeps the given JSON as is (a soft delete writes only `$tb`). */
  private writeMetadata(streamId: string, raw: Record<string, unknown>, now: Date, exact: boolean): LogRecord {
    const metastream = metastreamOf(streamId);
    const target = this.entry(metastream);
    const data = exact ? raw : { ...parseRawMetadata(target.records.at(-1)), ...raw };
    // JSON.stringify cannot write long.MaxValue exactly as a number: write the digits into the JSON.
    const json = JSON.stringify(data, (_key, value: unknown) => (value === Number(DELETED_STREAM) ? '__DELETED_STREAM__' : value)).replace(
      /"__DELETED_STREAM__"/g,
      DELETED_STREAM.toString(),
    );
    return this.write(
      metastream,
      target,
      BigInt(target.records.length),
      { id: randomUUID(), type: METADATA_EVENT_TYPE, isJson: true, data: encoder.encode(json), metadata: new Uint8Array() },
      now,
    );
  }

  /** StorageWriterService.SoftUndeleteStream: the stream's metadata with `$tb` at the first event written after the delete. */
  private softUndelete(streamId: string, recreateFrom: bigint, now: Date): void {
    if (!this.isSoftDeleted(streamId)) return;
    this.writeMetadata(streamId, { $tb: Number(recreateFrom) }, now, false);
  }

  private writtenLast(entry: StreamEntry | undefined): bigint {
    return entry === undefined ? -1n : BigInt(entry.records.length) - 1n;
  }

  private writtenMetadata(streamId: string): StreamMetadata {
    if (isMetastream(streamId)) return METASTREAM_METADATA;
    return toMetadata(parseRawMetadata(this.streams.get(metastreamOf(streamId))?.records.at(-1)));
  }

  private isSoftDeleted(streamId: string): boolean {
    return this.writtenMetadata(streamId).truncateBefore === DELETED_STREAM;
  }

  /** IndexWriter.CheckCommit (tombstones are dealt with by the caller). */
  private check(
    streamId: string,
    entry: StreamEntry | undefined,
    expected: ExpectedRevision,
    events: readonly ProposedEvent[],
  ): { kind: 'write'; softDeleted: boolean } | { kind: 'answer'; outcome: AppendOutcome } {
    const stream = entry?.records ?? [];
    const current = this.writtenLast(entry);
    const currentRevision = current < 0n ? undefined : current;
    const wrong = { kind: 'answer', outcome: { kind: 'wrong_expected_version', currentRevision } } as const;
    const softDeleted = this.isSoftDeleted(streamId);
    if (expected.kind === 'stream_exists') {
      if (softDeleted) return { kind: 'answer', outcome: { kind: 'stream_deleted' } };
      if (current < 0n && this.writtenLast(this.streams.get(metastreamOf(streamId))) < 0n) return wrong;
    }
    if (expected.kind === 'any' || expected.kind === 'stream_exists') {
      // Best effort: the ids are looked up in the bounded cache of recently committed events. The
      // append is a retry when all of them are found in this stream; when the first is not, it is a
      // new append (written again in full); when only some are, the real server answers "wrong
      // expected version" (CorruptedIdempotency).
      let first: LogRecord | undefined;
      let last: LogRecord | undefined;
      for (const event of events) {
        const found = this.committedIds.get(event.id);
        if (found === undefined || found.streamId !== streamId) return first === undefined ? { kind: 'write', softDeleted } : wrong;
        first ??= found;
        last = found;
      }
      if (last === undefined) return { kind: 'write', softDeleted };
      return { kind: 'answer', outcome: { kind: 'success', currentRevision: last.revision, position: last.position, idempotent: true, lastSequence: last.sequence } };
    }
    const expectedNumber = expected.kind === 'no_stream' ? -1n : expected.revision;
    if (expectedNumber < current) {
      // The stream moved past the expected revision: a retry if the events that follow it carry
      // the same ids, in the same order (looked up in the stream itself, so this is reliable).
      let eventNumber = expectedNumber;
      for (const [index, event] of events.entries()) {
        eventNumber += 1n;
        if (stream[Number(eventNumber)]?.id === event.id) continue;
        // Expecting no stream of a soft-deleted stream recreates it.
        if (index === 0 && expected.kind === 'no_stream' && softDeleted) return { kind: 'write', softDeleted };
        return wrong;
      }
      if (events.length === 0) return expected.kind === 'no_stream' && softDeleted ? { kind: 'write', softDeleted } : wrong;
      const last = stream[Number(eventNumber)] as LogRecord;
      return { kind: 'answer', outcome: { kind: 'success', currentRevision: last.revision, position: last.position, idempotent: true, lastSequence: last.sequence } };
    }
    if (expectedNumber > current) return wrong;
    return { kind: 'write', softDeleted };
  }

  private remember(record: LogRecord): void {
    this.committedIds.delete(record.id);
    this.committedIds.set(record.id, record);
    if (this.committedIds.size > COMMITTED_ID_CACHE_ENTRIES) {
      const oldest = this.committedIds.keys().next().value;
      if (oldest !== undefined) this.committedIds.delete(oldest);
    }
  }

  // ---------------------------------------------------------------- the index

  private scheduleIndex(sequence: number, dueMs: number): void {
    this.indexDue.set(sequence, dueMs);
    this.advanceIndex();
  }

  /** Moves the index over every record due by now, in log order, and wakes readers; re-arms the timer for the next one. */
  private advanceIndex(): void {
    const now = Date.now();
    const before = this.indexed;
    while (this.indexed < this.records.length) {
      const due = this.indexDue.get(this.indexed) ?? 0;
      if (due > now) break;
      this.indexDue.delete(this.indexed);
      this.indexed += 1;
    }
    if (this.indexed > before) this.notify();
    if (this.indexTimer !== undefined) {
      clearTimeout(this.indexTimer);
      this.indexTimer = undefined;
    }
    if (this.indexed < this.records.length) {
      const due = this.indexDue.get(this.indexed) ?? now;
      this.indexTimer = setTimeout(() => this.advanceIndex(), Math.max(0, due - now));
      this.indexTimer.unref();
    }
  }

  /** Resolves once the record at `sequence` (and so every one before it) is indexed. */
  async indexedThrough(sequence: number, signal?: AbortSignal): Promise<void> {
    while (this.indexed <= sequence && signal?.aborted !== true) await this.nextIndexed(signal);
  }

  /** Resolves at the next move of the index, or at once when `signal` is aborted. */
  nextIndexed(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = new Set();
    for (const wake of waiting) wake();
  }

  // ---------------------------------------------------------------- reads (against the index)

  /** The stream as a read sees it now (IndexReader.ReadStreamEvents*). */
  streamView(streamId: string, now: number = Date.now()): StreamView {
    const entry = this.streams.get(streamId);
    if (entry?.tombstone !== undefined && entry.tombstone.sequence < this.indexed) return { kind: 'deleted' };
    const last = this.indexedLast(entry);
    const metadata = this.indexedMetadata(streamId);
    if (last < 0n || metadata.truncateBefore === DELETED_STREAM) return { kind: 'not_found' };
    let first = 0n;
    if (metadata.maxCount !== undefined) first = last - metadata.maxCount + 1n > first ? last - metadata.maxCount + 1n : first;
    if (metadata.truncateBefore !== undefined && metadata.truncateBefore > first) first = metadata.truncateBefore;
    const records = (entry as StreamEntry).records;
    const oldestMs = metadata.maxAge === undefined ? undefined : now - Number(metadata.maxAge) * 1_000;
    return {
      kind: 'readable',
      first,
      last,
      at: (revision) => {
        if (revision < first || revision > last) return undefined;
        const record = records[Number(revision)];
        if (record === undefined || this.scavenged.has(record.sequence)) return undefined;
        if (oldestMs !== undefined && record.createdMs < oldestMs) return undefined;
        return record;
      },
    };
  }

  /** The newest indexed revision of a stream (-1: none); tombstones aside. */
  private indexedLast(entry: StreamEntry | undefined): bigint {
    if (entry === undefined) return -1n;
    let length = entry.records.length;
    while (length > 0 && (entry.records[length - 1] as LogRecord).sequence >= this.indexed) length -= 1;
    return BigInt(length) - 1n;
  }

  private indexedMetadata(streamId: string): StreamMetadata {
    if (isMetastream(streamId)) return METASTREAM_METADATA;
    const metastream = this.streams.get(metastreamOf(streamId));
    const last = this.indexedLast(metastream);
    return last < 0n ? {} : toMetadata(parseRawMetadata(metastream?.records[Number(last)]));
  }

  /** The indexed record at `index` of $all, unless a scavenge removed it. */
  at(index: number): LogRecord | undefined {
    if (index < 0 || index >= this.indexed) return undefined;
    return this.scavenged.has(index) ? undefined : this.records[index];
  }

  /** The index of the first record at or after `position` (the indexed count when none). */
  indexAtOrAfter(position: bigint): number {
    let low = 0;
    let high = this.indexed;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.records[middle] as LogRecord).position < position) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Whether a read may start at `position`: a record's start or the index's end (the real reader fails elsewhere). */
  isBoundary(position: bigint): boolean {
    if (position === this.indexedEndPosition) return true;
    return this.records[this.indexAtOrAfter(position)]?.position === position && this.indexAtOrAfter(position) < this.indexed;
  }

  /** For tests that inspect what was written, indexed or not. */
  written(index: number): LogRecord | undefined {
    return this.records[index];
  }

  // ---------------------------------------------------------------- scavenge

  /**
   * What a scavenge does to the log: the events no stream read can return any more (truncated by
   * `$tb` or `$maxCount`, older than `$maxAge`, of a soft-deleted or tombstoned stream) leave $all.
   * As on a node, the newest event of a stream and a tombstone are kept. Returns how many records
   * were removed.
   */
  scavenge(now: number = Date.now()): number {
    let removed = 0;
    for (const [streamId, entry] of this.streams) {
      const view = this.streamView(streamId, now);
      const lastIndex = entry.records.length - 1;
      entry.records.forEach((record, index) => {
        if (record.sequence >= this.indexed || this.scavenged.has(record.sequence)) return;
        const keep = view.kind === 'readable' ? view.at(record.revision) !== undefined : false;
        if (keep || (index === lastIndex && view.kind !== 'deleted')) return;
        this.scavenged.add(record.sequence);
        removed += 1;
      });
    }
    return removed;
  }
}
