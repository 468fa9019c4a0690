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
}
