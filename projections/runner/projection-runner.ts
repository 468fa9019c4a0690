import pg from 'pg';
import { prepared } from '../../src/database/prepared.js';
import type { EventStore, RecordedEvent, Subscription } from '../../src/event-store/event-store.port.js';
import { copyRows } from '../bulk/copy-rows.js';
import { MAX_PAGE_EVENTS, pageReader, pagesAfter } from '../bulk/event-pages.js';
import { type PageContext, type Projection, type ProjectionContext } from '../projection.js';
import { LOCK_NAMESPACE, lockKeySql } from './locks.js';
import { RunnerMetrics } from './runner-metrics.js';
import { asError } from '../../src/common/errors.js';

export interface RunnerLog {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface ProjectionRunnerOptions {
  /** Most events applied in one transaction while catching up. */
  readonly maxBatch: number;
  /** Attempts of one event before the projection stops at it and reports it. */
  readonly maxAttempts: number;
  /**
   * Events per page of the bulk path (Projection.pages), taken from the checkpoint while a full
   * page is waiting (a rebuild, a large backlog); 0 turns it off. Default DEFAULT_PAGE_EVENTS.
   */
  readonly pageEvents?: number;
  /** First retry delay; doubles per attempt, capped at MAX_RETRY_DELAY_MS. */
  readonly retryBaseMs?: number;
  readonly log?: (message: string) => void;
  readonly logger?: RunnerLog;
  readonly metrics?: RunnerMetrics;
  /** The `state` written with each checkpoint: 'rebuilding' for a rebuild's own row. */
  readonly checkpointState?: 'running' | 'rebuilding';
  /** Called after each committed batch (tests, progress bars). */
  readonly onBatch?: (batch: { readonly size: number; readonly lastPosition: bigint }) => void;
  /**
   * Asked when the checkpoint moved under a batch: true when this runner may resume from it (a
   * rebuild's swap moved it), false when another runner moved it (this process lost its lock
   * without noticing: a partition, a session the server ended), in which case the runner ends with
   * LeadershipLostError instead of competing with the new holder. Without it the runner resumes.
   */
  readonly mayResumeAfterMove?: () => Promise<boolean>;
}

/** The runner's checkpoint was moved by another runner: this process no longer holds the projection. */
export class LeadershipLostError extends Error {
  readonly code = 'leadership_lost';
  constructor(readonly projection: string) {
    super(`the checkpoint of ${projection} was moved by another runner: this process no longer holds its lock`);
  }
}

/**
 * Batches of up to 5,000 events while catching up (at the live edge they hold what arrived since
 * the last one, a few events): each batch costs a transaction, a checkpoint and a few statements
 * whatever its size, so larger batches cost the runner less CPU per event while catching up
 * (bench:projections measures the catch-up: docs/benchmarks.md).
 */
export const DEFAULT_RUNNER_OPTIONS: ProjectionRunnerOptions = { maxBatch: 5_000, maxAttempts: 5 };
/**
 * Pages of the bulk path: a transaction, a checkpoint and a handful of statements per page, so the
 * larger the page the less each event carries of them; two pages are held in memory (one applied,
 * one read ahead), tens of MB at this size.
 */
export const DEFAULT_PAGE_EVENTS = 20_000;
const MAX_RETRY_DELAY_MS = 5_000;
/** See ProjectionRunner.gather: how long the queue must stay still, and the most a live batch waits for it. */
const GATHER_QUIET_MS = 1;
const GATHER_MAX_MS = 10;
const MAX_ERROR_LENGTH = 2_000;

/** The checkpoint row no longer holds the position this runner started its batch from: someone else (a rebuild's swap) moved it. */
export class CheckpointMovedError extends Error {
  readonly code = 'checkpoint_moved';
  constructor(readonly checkpointName: string) {
    super(`the checkpoint of ${checkpointName} moved under this runner`);
  }
}

/** The runner gave up on one event after its bounded retries. */
export class ProjectionStoppedError extends Error {
  readonly code = 'projection_stopped';
  constructor(
    readonly projection: string,
    readonly position: bigint,
    readonly reason: string,
  ) {
    super(`projection ${projection} stopped at position ${position}: ${reason}`);
  }
}

/** The handlers' view of one transaction: SQL on `client` (prepared: handlers' texts are fixed per table), table names mapped (live or shadow). */
export function projectionContext(client: pg.PoolClient | pg.Client, projection: Projection, tableName: (table: string) => string): ProjectionContext {
  return {
    table: (name) => {
      if (!projection.tables.includes(name)) throw new Error(`invariant: ${projection.name} does not own table ${name}`);
      return tableName(name);
    },
    query: async <T>(sql: string, params?: readonly unknown[]) => (await client.query(prepared(sql, params))).rows as T[],
  };
}

/** A page's transaction (Projection.pages): the handlers' context, COPY, and savepoints. */
export function pageContext(client: pg.PoolClient | pg.Client, projection: Projection, tableName: (table: string) => string): PageContext {
  const context = projectionContext(client, projection, tableName);
  return {
    ...context,
    copy: async (table, columns, rows) => {
      await copyRows(client, context.table(table), columns, rows);
    },
    attempt: async (work) => {
      await client.query('savepoint page_attempt');
      try {
        const value = await work();
        await client.query('release savepoint page_attempt');
        return { ok: true, value };
      } catch (error) {
        await client.query('rollback to savepoint page_attempt');
        return { ok: false, error };
      }
    },
  };
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Applies one projection's events to its tables: subscribes from the stored checkpoint, and
 * applies whatever has queued up (up to maxBatch) in one transaction together with the new
 * checkpoint. While catching up the queue is full, so batches are large; when live, events arrive
 * one at a time and are applied one at a time.
 *
 * A batch that fails is replayed one event per transaction, so that the good events before the
 * culprit are kept and the projection stops exactly at the event that keeps failing.
 */
export class ProjectionRunner {
  readonly metrics: RunnerMetrics;
  private subscription: Subscription | undefined;
  private stopped = false;
  private done: Promise<void> | undefined;
  private wakeSleep: (() => void) | undefined;
  private readonly options: ProjectionRunnerOptions;
  /** Live batches take the swap lock shared, so that a rebuild's swap sees no batch in flight. */
  private readonly takesSwapLock: boolean;
  private readonly beginSql: string;
  private readonly checkpointLiteral: string;
  private readonly stateLiteral: string;
  private readonly pageEvents: number;

  constructor(
    private readonly pool: pg.Pool,
    private readonly store: EventStore,
    private readonly projection: Projection,
    options: ProjectionRunnerOptions | undefined = DEFAULT_RUNNER_OPTIONS,
    /** Physical table names: identity for the live tables, the shadow ones for a rebuild. */
    private readonly tableName: (table: string) => string = (table) => table,
    /** The checkpoint row's key: the projection's name, or a rebuild's own. */
    private readonly checkpointName: string = projection.name,
  ) {
    this.options = options ?? DEFAULT_RUNNER_OPTIONS;
    if (!Number.isInteger(this.options.maxBatch) || this.options.maxBatch < 1 || this.options.maxBatch > 10_000) throw new RangeError('maxBatch must be 1 to 10000');
    if (!Number.isInteger(this.options.maxAttempts) || this.options.maxAttempts < 1 || this.options.maxAttempts > 100) throw new RangeError('maxAttempts must be 1 to 100');
    const pageEvents = this.options.pageEvents ?? DEFAULT_PAGE_EVENTS;
    if (!Number.isInteger(pageEvents) || pageEvents < 0 || pageEvents > MAX_PAGE_EVENTS) throw new RangeError(`pageEvents must be 0 to ${MAX_PAGE_EVENTS}`);
    this.pageEvents = this.projection.pages === true ? pageEvents : 0;
    this.metrics = this.options.metrics ?? new RunnerMetrics();
    this.takesSwapLock = checkpointName === projection.name;
    // Literals, not parameters: these statements go as one simple query (several statements, one
    // round trip), which takes no parameters. The values are this runner's own names.
    this.checkpointLiteral = pg.escapeLiteral(checkpointName);
    this.stateLiteral = pg.escapeLiteral(this.options.checkpointState ?? 'running');
    this.beginSql = [
      'begin',
      'set local synchronous_commit = off',
      // A projection's statements find their rows by key: the batch's keys, looked up one by one
      // (a nested loop over the index). Their plans are prepared once per connection, often while
      // the tables are still small, when a hash join over a scan of the whole table costs less
      // than a hundred lookups (the planner's guess for any set-returning function, such as
      // jsonb_to_recordset of a batch); kept as the table grew, such a plan made every batch read
      // the whole table, a cost growing with the table for every row moved. Scans and hash or merge joins
      // of whole tables are never what these statements need.
      'set local enable_seqscan = off',
      'set local enable_hashjoin = off',
      'set local enable_mergejoin = off',
      ...(this.takesSwapLock ? [`select pg_advisory_xact_lock_shared(${LOCK_NAMESPACE.swap}, ${lockKeySql(pg.escapeLiteral(projection.name))})`] : []),
    ].join('; ');
  }

  start(): void {
    this.done ??= this.run();
  }

  /** Resolves when the runner has stopped, after the batch in flight (if any) committed or rolled back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeSleep?.();
    await this.subscription?.close();
    await this.done?.catch(() => undefined);
  }

  get isStopping(): boolean {
    return this.stopped;
  }

  /** Resolves when the runner ends: after stop(), or rejects when an event stopped it. */
  get finished(): Promise<void> {
    return this.done ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    // A rebuild's swap may move the checkpoint under a running live runner: start over from it.
    while (!this.stopped) {
      try {
        await this.runFromCheckpoint();
        return;
      } catch (error) {
        // Stopping interrupts retries: that is not a failure of the projection.
        if (this.stopped && !(error instanceof ProjectionStoppedError)) return;
        if (!(error instanceof CheckpointMovedError)) throw error;
        if (this.options.mayResumeAfterMove !== undefined && !(await this.options.mayResumeAfterMove().catch(() => false))) {
          this.options.logger?.warn(`${this.projection.name}: the checkpoint moved and this process no longer holds the projection's lock: stepping down`);
          throw new LeadershipLostError(this.projection.name);
        }
        this.options.logger?.log(`${this.projection.name}: checkpoint moved (rebuild swapped in), resuming from it`);
      }
    }
  }

  private async runFromCheckpoint(): Promise<void> {
    let checkpoint = await this.readCheckpoint();
    this.metrics.position = checkpoint;
    if (this.pageEvents > 0) checkpoint = await this.applyPages(checkpoint);
    if (this.stopped) return;
    const subscription = this.store.subscribeToAll({
      fromPosition: checkpoint === 0n ? undefined : checkpoint,
      filter: { streamCategories: this.projection.categories },
    });
    this.subscription = subscription;

    const queue: RecordedEvent[] = [];
    let wakeApplier: (() => void) | undefined;
    let wakePump: (() => void) | undefined;
    let pumpEnded = false;
    let pumpError: Error | undefined;
    let ended = false;

    const pump = (async () => {
      try {
        for await (const event of subscription) {
          queue.push(event);
          wakeApplier?.();
          // Backpressure: let the applier drain before reading further.
          while (queue.length >= this.options.maxBatch * 2 && !this.stopped && !ended) {
            await new Promise<void>((resolvePump) => (wakePump = resolvePump));
          }
          if (this.stopped || ended) break;
        }
      } catch (error) {
        pumpError = asError(error);
      } finally {
        pumpEnded = true;
        wakeApplier?.();
      }
    })();

    let position = checkpoint;
    try {
      while (!this.stopped) {
        if (queue.length === 0) {
          if (pumpEnded) break;
          await new Promise<void>((resolveApplier) => (wakeApplier = resolveApplier));
          wakeApplier = undefined;
          continue;
        }
        await this.gather(queue);
        const batch = queue.splice(0, this.options.maxBatch);
        wakePump?.();
        if (batch[0].position <= position) throw new Error(`invariant: ${this.projection.name} received position ${batch[0].position} after ${position}`);
        position = await this.applyBatch(batch, position);
        const last = batch[batch.length - 1];
        this.metrics.recordBatch(batch.length, last.position, last.createdAt, queue.length === 0 && batch.length < this.options.maxBatch);
        this.options.onBatch?.({ size: batch.length, lastPosition: last.position });
      }
    } finally {
      ended = true;
      await subscription.close();
      wakePump?.();
      await pump;
    }
    if (pumpError !== undefined && !this.stopped) throw pumpError;
  }

  /**
   * Lets the read that woke the applier finish queueing before a batch is taken. A subscription
   * hands its events over one at a time (PostgreSQL: a read's events a microtask apart;
   * EventStoreDB: as the gRPC frames arrive): a batch taken at the first would hold it alone, and
   * each live batch costs its own transaction, so batches of one event each cost the worker several
   * times the CPU per check that gathered batches do.
   * Waits while the queue still grows, GATHER_QUIET_MS at a time, at most GATHER_MAX_MS, and not
   * at all once a full batch is waiting.
   */
  private async gather(queue: readonly RecordedEvent[]): Promise<void> {
    const deadline = performance.now() + GATHER_MAX_MS;
    let seen = -1;
    while (queue.length !== seen && queue.length < this.options.maxBatch && performance.now() < deadline && !this.stopped) {
      seen = queue.length;
      await new Promise<void>((resolveWait) => setTimeout(resolveWait, GATHER_QUIET_MS));
    }
  }

  /**
   * The bulk path: while full pages are waiting after the checkpoint, each is applied by the
   * projection's handle (Projection.pages) in one transaction with the checkpoint, the next page read meanwhile.
   * Returns the position reached; from there the subscription takes over (after the first page
   * shorter than a full one, at once when the backlog is less than a page). A page that fails is
   * left to the subscription too, whose batches fall back to one event per transaction and stop
   * exactly at the event that keeps failing.
   */
  private async applyPages(from: bigint): Promise<bigint> {
    const projection = this.projection;
    if (projection.pages !== true) return from;
    const read = pageReader(this.store, this.projection.categories);
    let position = from;
    let applied = 0;
    let interrupted = false;
    for await (const page of pagesAfter(read, from, this.pageEvents, () => !this.stopped)) {
      interrupted = true;
      // Less than a page waiting: not worth a page's transaction; the subscription reads it again.
      if (applied === 0 && page.length < this.pageEvents) break;
      if (this.stopped) break;
      try {
        position = await this.apply(page, position, (context) => projection.handle(page, context));
      } catch (error) {
        if (error instanceof CheckpointMovedError) throw error;
        this.options.logger?.warn(`${this.projection.name}: a page of ${page.length} from position ${position} failed (${errorMessage(error)}); going on in batches`);
        break;
      }
      applied += page.length;
      const last = page[page.length - 1];
      this.metrics.recordBatch(page.length, last.position, last.createdAt, false);
      this.options.onBatch?.({ size: page.length, lastPosition: last.position });
      interrupted = false;
    }
    // The pages ran out (a short or empty page): this is the head, as far as it was visible, so
    // the runner is caught up, as after a short batch, even when no event follows.
    if (applied > 0 && !interrupted && !this.stopped) this.metrics.state = 'running';
    return position;
  }

  private async applyBatch(batch: RecordedEvent[], from: bigint): Promise<bigint> {
    if (batch.length === 1) return this.applyWithRetries(batch, from);
    try {
      return await this.apply(batch, from);
    } catch (error) {
      if (error instanceof CheckpointMovedError) throw error;
      this.options.logger?.warn(`${this.projection.name}: a batch of ${batch.length} from position ${from} failed (${errorMessage(error)}); applying it event by event`);
      let position = from;
      for (const event of batch) {
        if (this.stopped) break;
        position = await this.applyWithRetries([event], position);
      }
      return position;
    }
  }

  private async applyWithRetries(batch: RecordedEvent[], from: bigint): Promise<bigint> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.apply(batch, from);
      } catch (error) {
        if (error instanceof CheckpointMovedError || this.stopped) throw error;
        const message = errorMessage(error);
        if (attempt >= this.options.maxAttempts) {
          const at = batch[0];
          // The event's type and position only: its data may hold personal data.
          const reason = `${at.type} at position ${at.position} failed after ${attempt} attempts: ${message}`;
          this.metrics.recordStop(reason, at.position);
          await this.markStopped(at.position, reason).catch((markError: unknown) =>
            this.options.logger?.error(`${this.projection.name}: could not record the stop: ${errorMessage(markError)}`),
          );
          this.options.logger?.error(`projection ${this.projection.name} stopped: ${reason}`);
          this.options.log?.(`projection ${this.projection.name} stopped at position ${at.position}: ${message}`);
          throw new ProjectionStoppedError(this.projection.name, at.position, reason);
        }
        this.options.logger?.warn(`${this.projection.name}: attempt ${attempt} of ${this.options.maxAttempts} at position ${batch[0].position} failed: ${message}`);
        await this.sleep(Math.min((this.options.retryBaseMs ?? 100) * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS));
      }
    }
  }

  /**
   * One batch, one transaction, in two round trips besides the handlers' own statements: the
   * first opens it (and takes the swap lock), the last advances the checkpoint and commits.
   *
   * The transaction commits asynchronously (`synchronous_commit = off`): it does not wait for its
   * WAL to reach the disk. That is safe because the checkpoint commits with the rows: a crash can
   * lose only the last moments of applied batches, rows and checkpoint together, and the runner
   * applies them again from the events, which are committed durably before anyone can read them.
   */
  private async apply(batch: RecordedEvent[], from: bigint, applyPage?: (context: PageContext) => Promise<void>): Promise<bigint> {
    const client = await this.pool.connect();
    try {
      await client.query(this.beginSql);
      if (applyPage === undefined) await this.projection.handle(batch, projectionContext(client, this.projection, this.tableName));
      else await applyPage(pageContext(client, this.projection, this.tableName));
      const last = batch[batch.length - 1].position;
      // Guarded by the previous position: a second runner or a swap that moved it makes the
      // function raise, which aborts the transaction before its commit.
      try {
        await client.query(`select advance_projection_checkpoint(${this.checkpointLiteral}, ${from}, ${last}, ${batch.length}, ${this.stateLiteral}); commit`);
      } catch (error) {
        if ((error as { code?: string }).code === 'P0002' && errorMessage(error) === 'checkpoint_moved') throw new CheckpointMovedError(this.checkpointName);
        throw error;
      }
      return last;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  private async readCheckpoint(): Promise<bigint> {
    await this.pool.query('insert into projection_checkpoints (name, state) values ($1, $2) on conflict (name) do nothing', [
      this.checkpointName,
      this.options.checkpointState ?? 'running',
    ]);
    const { rows } = await this.pool.query<{ position: string }>('select position from projection_checkpoints where name = $1', [this.checkpointName]);
    return BigInt(rows[0].position);
  }

  private async markStopped(position: bigint, error: string): Promise<void> {
    await this.pool.query(`update projection_checkpoints set state = 'stopped', error = $2, failed_position = $3, updated_at = now() where name = $1`, [
      this.checkpointName,
      error.slice(0, MAX_ERROR_LENGTH),
      position.toString(),
    ]);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolveSleep) => {
      const timer = setTimeout(done, ms);
      const wake = () => {
        clearTimeout(timer);
        done();
      };
      this.wakeSleep = wake;
      function done() {
        resolveSleep();
      }
    });
  }
}
