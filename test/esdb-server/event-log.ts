/**
 * The in-memory transaction log of the EventStoreDB test server (test support only).
 *
 * Modelled on what EventStoreDB does for a gRPC append (EventStore/EventStore, StorageWriterService
 * WriteEvents, IndexWriter.CheckCommit, ResolvedEvent.CalculatePosition):
 * - every event of an append is its own "self-committed" prepare record, written at the log's current
 *   end; the log then grows by the record's size in bytes. An event's position in $all is therefore
 *   (commit, prepare) = (its record's log position, the same), strictly increasing in append order,
 *   and the events of one multi-event append do NOT share a commit position;
 * - the append reply carries the last event's position as both commit and prepare position;
 * - positions are byte offsets: increasing, never dense.
 */

export type ExpectedRevision =
  | { readonly kind: 'any' }
  | { readonly kind: 'no_stream' }
  | { readonly kind: 'stream_exists' }
  | { readonly kind: 'revision'; readonly revision: bigint };

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
  readonly streamId: string;
  readonly revision: bigint;
  /** .NET ticks (100 ns) since the Unix epoch, as the server sends them in the `created` metadata. */
  readonly createdTicks: bigint;
}

export type AppendOutcome =
  | {
      readonly kind: 'success';
      /** The stream's revision after the append, or undefined when it still has no event. */
      readonly currentRevision: bigint | undefined;
      /** The last event's position; undefined when the append wrote nothing. */
      readonly position: bigint | undefined;
      readonly idempotent: boolean;
    }
  | { readonly kind: 'wrong_expected_version'; readonly currentRevision: bigint | undefined };

/** The real server keeps the ids of recently committed events in a bounded memory cache: idempotency of `any`/`stream_exists` appends is best effort. */
export const COMMITTED_ID_CACHE_ENTRIES = 100_000;
/** Fixed bytes of a v2 prepare record besides its variable parts (length prefix and suffix, header, ids, timestamps). */
const RECORD_OVERHEAD_BYTES = 90n;
const TICKS_PER_MS = 10_000n;

const encoder = new TextEncoder();

function recordSize(streamId: string, event: ProposedEvent): bigint {
  return RECORD_OVERHEAD_BYTES + BigInt(encoder.encode(streamId).length + encoder.encode(event.type).length + event.data.length + event.metadata.length);
}

export class EventLog {
  private readonly records: LogRecord[] = [];
  private readonly streams = new Map<string, LogRecord[]>();
  /** Event id -> where it was committed; insertion order is age, the oldest is evicted first. */
  private readonly committedIds = new Map<string, LogRecord>();
  private end = 0n;
  private waiters = new Set<() => void>();

  /** The position the next record will be written at (the log's end, a valid read position). */
  get endPosition(): bigint {
    return this.end;
  }

  get recordCount(): number {
    return this.records.length;
  }

  append(streamId: string, expected: ExpectedRevision, events: readonly ProposedEvent[], now: Date = new Date()): AppendOutcome {
    const stream = this.streams.get(streamId);
    const current = stream === undefined || stream.length === 0 ? undefined : BigInt(stream.length - 1);
    const decision = this.check(streamId, stream, current, expected, events);
    if (decision !== 'write') return decision;
    if (events.length === 0) return { kind: 'success', currentRevision: current, position: undefined, idempotent: false };

    const target = stream ?? [];
    if (stream === undefined) this.streams.set(streamId, target);
    const createdTicks = BigInt(now.getTime()) * TICKS_PER_MS;
    let last: LogRecord | undefined;
    for (const event of events) {
      const record: LogRecord = { ...event, streamId, revision: BigInt(target.length), position: this.end, createdTicks };
      this.end += recordSize(streamId, event);
      this.records.push(record);
      target.push(record);
      this.remember(record);
      last = record;
    }
    this.notify();
    return { kind: 'success', currentRevision: last?.revision, position: last?.position, idempotent: false };
  }

  /** IndexWriter.CheckCommit, for a log without deleted streams. */
  private check(
    streamId: string,
    stream: readonly LogRecord[] | undefined,
    current: bigint | undefined,
    expected: ExpectedRevision,
    events: readonly ProposedEvent[],
  ): AppendOutcome | 'write' {
    const wrong: AppendOutcome = { kind: 'wrong_expected_version', currentRevision: current };
    if (stream === undefined) {
      // A stream never written: only any and no_stream may create it.
      return expected.kind === 'any' || expected.kind === 'no_stream' ? 'write' : wrong;
    }
    if (expected.kind === 'any' || expected.kind === 'stream_exists') {
      if (expected.kind === 'stream_exists' && current === undefined) return wrong;
      // Best effort: the ids are looked up in the bounded cache of recently committed events. The
      // append is a retry when all of them are found in this stream; when the first is not, it is a
      // new append (written again in full); when only some are, the real server answers "wrong
      // expected version".
      let first: LogRecord | undefined;
      let last: LogRecord | undefined;
      for (const event of events) {
        const found = this.committedIds.get(event.id);
        if (found === undefined || found.streamId !== streamId) return first === undefined ? 'write' : wrong;
        first ??= found;
        last = found;
      }
      if (last === undefined) return 'write';
      return { kind: 'success', currentRevision: last.revision, position: last.position, idempotent: true };
    }
    const expectedNumber = expected.kind === 'no_stream' ? -1n : expected.revision;
    const currentNumber = current ?? -1n;
    if (expectedNumber < currentNumber) {
      // The stream moved past the expected revision: a retry if the events that follow it carry
      // the same ids, in the same order (looked up in the stream itself, so this is reliable).
      let eventNumber = expectedNumber;
      for (const event of events) {
        eventNumber += 1n;
        if (stream[Number(eventNumber)]?.id !== event.id) return wrong;
      }
      if (eventNumber === expectedNumber) return wrong;
      const last = stream[Number(eventNumber)];
      return { kind: 'success', currentRevision: last.revision, position: last.position, idempotent: true };
    }
    if (expectedNumber > currentNumber) return wrong;
    return 'write';
  }

  private remember(record: LogRecord): void {
    this.committedIds.delete(record.id);
    this.committedIds.set(record.id, record);
    if (this.committedIds.size > COMMITTED_ID_CACHE_ENTRIES) {
      const oldest = this.committedIds.keys().next().value;
      if (oldest !== undefined) this.committedIds.delete(oldest);
    }
  }

  stream(streamId: string): readonly LogRecord[] | undefined {
    return this.streams.get(streamId);
  }

  /** The record at index `index` of $all, in position order. */
  at(index: number): LogRecord | undefined {
    return this.records[index];
  }

  /** The index of the first record at or after `position` (records.length when none). */
  indexAtOrAfter(position: bigint): number {
    let low = 0;
    let high = this.records.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.records[middle].position < position) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Whether a read may start at `position`: a record's start or the log's end (the real reader fails elsewhere). */
  isBoundary(position: bigint): boolean {
    if (position === this.end) return true;
    return this.records[this.indexAtOrAfter(position)]?.position === position;
  }

  /** Resolves at the next append, or at once when `signal` is aborted. */
  nextAppend(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private notify(): void {
    const waiting = this.waiters;
    this.waiters = new Set();
    for (const wake of waiting) wake();
  }
}
