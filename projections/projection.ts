import type { RecordedEvent } from '../src/event-store/event-store.port.js';
import type { CopyValue } from './bulk/copy-rows.js';

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

/**
 * A read model, defined once: `handle` over consecutive events. The runner's live batches, its
 * pages, a rebuild's replay and the one-event retries all call it; the per-event path is
 * `handle([event], context)`, so there is no second body to keep equal to the first.
 */
export interface Projection {
  /** Stable name: checkpoint key, CLI argument, metrics label. */
  readonly name: string;
  /** Stream categories it subscribes to. */
  readonly categories: readonly string[];
  /** The tables it owns (and a rebuild replaces). */
  readonly tables: readonly string[];
  /**
   * Applies consecutive events (in position order: one, a batch up to the runner's maxBatch, or a
   * page) in the caller's transaction. Must be idempotent: applying an event twice leaves the same
   * rows. Whatever it refuses fails the whole call; the runner then applies the batch event by
   * event and stops at the culprit. A projection written per event wraps its body in `eachEvent`.
   */
  handle(events: readonly RecordedEvent[], context: ProjectionContext): Promise<void>;
  /**
   * Whether `handle` also takes pages, for rebuilds and large backlogs: tens of thousands of
   * events with a PageContext (see `pageContextOf`), whose new rows it may write with `copy`. The
   * page's events carry only `occurredAt` in their metadata (see LogReader.categoryPages): a
   * projection that needs more takes no pages.
   */
  readonly pages?: boolean;
}

/** `handle` for a projection written per event: the events one by one, in order, in the one transaction. */
export function eachEvent(apply: (event: RecordedEvent, context: ProjectionContext) => Promise<void>): Projection['handle'] {
  return async (events, context) => {
    for (const event of events) await apply(event, context);
  };
}

/** A page's transaction: the handlers' context, plus COPY into one of the projection's tables. */
export interface PageContext extends ProjectionContext {
  /** `COPY table (columns) FROM STDIN` of the rows, in the page's transaction; `table` is the logical name. */
  copy(table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<void>;
  /** Runs `work` under a savepoint: when it throws, what it wrote is undone and the transaction goes on. */
  attempt<T>(work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }>;
}

/** The page's context when `handle` is given a page (Projection.pages), else undefined. */
export function pageContextOf(context: ProjectionContext): PageContext | undefined {
  return 'copy' in context && 'attempt' in context ? (context as PageContext) : undefined;
}
