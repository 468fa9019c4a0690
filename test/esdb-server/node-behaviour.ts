/**
 * How the EventStoreDB test server behaves as a node, switchable while it runs (by a test, through
 * its control: test/esdb-server/control.ts): how far reads trail writes, when appends are
 * acknowledged, how slow the writer is, and appends that are made to time out.
 */
import type { EventLog } from './event-log.js';

export interface NodeSettings {
  /** How far reads, subscriptions and $all trail what is written (the index's lag). */
  readonly readLagMs: number;
  /**
   * When an append is acknowledged: `indexed` (as a leader does: once its events are readable, so
   * a writer reads its own acknowledged write) or `written` (at once: reads lag behind acknowledged
   * writes, as reads served by a follower do).
   */
  readonly acknowledge: 'indexed' | 'written';
  /** A slow writer: each write, delete or tombstone is written this long after it is received. */
  readonly writeDelayMs: number;
}

/**
 * What the next matching appends (deletes and tombstones too) meet:
 * - `commit-then-timeout`: the events are written (and indexed), the client is answered with the
 *   node's commit timeout (Append: ABORTED "Operation timed out"; BatchAppend: the Timeout status),
 *   as when a node commits after its 2 s commit timeout;
 * - `timeout-without-commit`: nothing is written, the same timeout answer.
 */
export interface AppendFault {
  readonly outcome: 'commit-then-timeout' | 'timeout-without-commit';
  /** How many appends it applies to (default 1). */
  readonly count?: number;
  /** Only appends to streams whose name starts with this (default: any stream). */
  readonly streamPrefix?: string;
  /** Only appends that carry an event of this type (default: any append, deletes and tombstones included). */
  readonly eventType?: string;
}

/** What a node does when a request waits longer than this for its write or its index (PrepareTimeoutMs, CommitTimeoutMs). */
export const REQUEST_TIMEOUT_MS = 2_000;
/** A node's WriteTimeoutMs: the longest a batch append waits for its last message, whatever deadline the client asks. */
export const WRITE_TIMEOUT_MS = 2_000;

export const DEFAULT_SETTINGS: NodeSettings = { readLagMs: 0, acknowledge: 'indexed', writeDelayMs: 0 };

export class NodeBehaviour {
  private current: NodeSettings;
  private readonly faults: { outcome: AppendFault['outcome']; streamPrefix: string; eventType: string | undefined; remaining: number }[] = [];

  constructor(
    private readonly log: EventLog,
    settings: Partial<NodeSettings> = {},
  ) {
    this.current = { ...DEFAULT_SETTINGS };
    this.configure(settings);
  }

  get settings(): NodeSettings {
    return this.current;
  }

  configure(settings: Partial<NodeSettings>): NodeSettings {
    const next = { ...this.current, ...settings };
    if (!Number.isFinite(next.readLagMs) || next.readLagMs < 0) throw new RangeError('readLagMs must be a non-negative number');
    if (!Number.isFinite(next.writeDelayMs) || next.writeDelayMs < 0) throw new RangeError('writeDelayMs must be a non-negative number');
    if (next.acknowledge !== 'indexed' && next.acknowledge !== 'written') throw new RangeError('acknowledge must be "indexed" or "written"');
    this.current = next;
    this.log.setReadLag(next.readLagMs);
    return next;
  }

  failAppends(fault: AppendFault): void {
    const count = fault.count ?? 1;
    if (!Number.isInteger(count) || count < 1) throw new RangeError('count must be a positive integer');
    if (fault.outcome !== 'commit-then-timeout' && fault.outcome !== 'timeout-without-commit') throw new RangeError('unknown append fault');
    this.faults.push({ outcome: fault.outcome, streamPrefix: fault.streamPrefix ?? '', eventType: fault.eventType, remaining: count });
  }

  /** Clears the faults not yet met; answers how many appends they would still have hit. */
  clearFaults(): number {
    const left = this.faults.reduce((sum, fault) => sum + fault.remaining, 0);
    this.faults.length = 0;
    return left;
  }

  /** The fault this write of `eventTypes` to `streamId` meets, if any (counted as met). */
  takeFault(streamId: string, eventTypes: readonly string[]): AppendFault['outcome'] | undefined {
    const index = this.faults.findIndex((fault) => streamId.startsWith(fault.streamPrefix) && (fault.eventType === undefined || eventTypes.includes(fault.eventType)));
    if (index < 0) return undefined;
    const fault = this.faults[index] as { outcome: AppendFault['outcome']; remaining: number };
    fault.remaining -= 1;
    if (fault.remaining === 0) this.faults.splice(index, 1);
    return fault.outcome;
  }
}
