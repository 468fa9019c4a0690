import type { RecordedEvent } from '../src/event-store/event-store.port.js';

/**
 * What a projection handler may do: run SQL inside the batch's transaction. The checkpoint is
 * written in the same transaction by the runner. Table names go through `table()`, because a
 * rebuild writes the same handlers into shadow tables.
 */
export interface ProjectionContext {
  /** The physical name of one of the projection's own tables (live, or the rebuild's shadow). */
  table(name: string): string;
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
}

export interface Projection {
  /** Stable name: checkpoint key, CLI argument, metrics label. */
  readonly name: string;
  /** Stream categories it subscribes to. */
  readonly categories: readonly string[];
  /** The tables it owns (and a rebuild replaces). */
  readonly tables: readonly string[];
  /** Must be idempotent: applying an event twice leaves the same rows. */
  handle(event: RecordedEvent, context: ProjectionContext): Promise<void>;
  /**
   * Optional, for fast catch-up: applies consecutive events (in position order, up to the runner's
   * maxBatch) in a few set-based statements, with exactly the effect of `handle` on each in turn.
   * One round trip per event caps a projection at a few thousand events/s; this lifts the cap.
   */
  handleBatch?(events: readonly RecordedEvent[], context: ProjectionContext): Promise<void>;
}

/** Applies events through `handleBatch` when the projection has it, else one by one. */
export async function applyEvents(projection: Projection, events: readonly RecordedEvent[], context: ProjectionContext): Promise<void> {
  if (events.length === 0) return;
  if (projection.handleBatch !== undefined && events.length > 1) {
    await projection.handleBatch(events, context);
    return;
  }
  for (const event of events) await projection.handle(event, context);
}
