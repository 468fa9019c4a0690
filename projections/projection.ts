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
  /**
   * Optional, for rebuilds and large backlogs: applies a page of consecutive events (tens of
   * thousands, in position order) folded in memory, its new rows written with `copy`, with exactly
   * the effect of `handle` on each in turn. The events' metadata holds only `occurredAt`
   * (see bulk/event-pages.ts): a projection that needs more has no page path.
   */
  applyPage?(events: readonly RecordedEvent[], context: PageContext): Promise<void>;
  /**
   * Optional, for rebuilds on the PostgreSQL event log: folds the log inside the database. See DatabaseFolder.
   */
  readonly foldInDatabase?: DatabaseFolder;
}

/**
 * A projection's fold of the PostgreSQL log inside the database: its empty tables written, in a few
 * `insert … select` statements over the `events` table (no event leaves the database), with exactly
 * the rows that `handle` on each of its events at or below a position would leave. Every event at
 * or below that position must be visible (committed or rolled back) when they run.
 */
export interface DatabaseFolder {
  /**
   * A read-only statement ($1 the position) answering one row: `events`, the projection's events
   * at or below the position, and counts of those `fold` would not write as `handle` does (a value
   * of an unexpected JSON type, an event `handle` refuses), each named by the case it counts. The
   * rebuild runs it on a session of its own while `fold` runs, and rolls the fold back when any of
   * these counts is above zero: the page path then replays the log, which applies it event for
   * event or stops at the culprit.
   */
  readonly oddEventsSql: string;
  /**
   * Writes the rows of one part of the log's keys (`part` of `parts`: the keys the projection folds
   * by, a wallet or a reference, split by their hash) in the caller's transaction; the parts are
   * written side by side on sessions of their own. Declines (the caller rolls back) on what only the
   * written rows show.
   */
  fold(context: ProjectionContext, upToPosition: bigint, part: number, parts: number): Promise<DatabaseFold>;
  /** Optional: what is computed from all the parts' rows (totals), in the caller's transaction, which sees them committed. */
  finish?(context: ProjectionContext): Promise<void>;
}

/** What `DatabaseFolder.fold` did: folded, or declined, and why (no value from the log in it). */
export type DatabaseFold = { readonly outcome: 'folded' } | { readonly outcome: 'declined'; readonly reason: string };

/** A page's transaction: the handlers' context, plus COPY into one of the projection's tables. */
export interface PageContext extends ProjectionContext {
  /** `COPY table (columns) FROM STDIN` of the rows, in the page's transaction; `table` is the logical name. */
  copy(table: string, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<void>;
  /** Runs `work` under a savepoint: when it throws, what it wrote is undone and the transaction goes on. */
  attempt<T>(work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }>;
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
