import type pg from 'pg';
import type { EventStore, RecordedEvent, Subscription } from '../../src/event-store/event-store.port.js';
import type { Projection, ProjectionContext } from '../projection.js';

export interface ProjectionRunnerOptions {
  /** Most events applied in one transaction while catching up. */
  readonly maxBatch: number;
  /** Attempts of one batch before the projection stops at its first event and reports it. */
  readonly maxAttempts: number;
  readonly log?: (message: string) => void;
}

export const DEFAULT_RUNNER_OPTIONS: ProjectionRunnerOptions = { maxBatch: 500, maxAttempts: 5 };

const sleep = (ms: number) => new Promise<void>((resolveSleep) => setTimeout(resolveSleep, ms));

/**
 * Applies one projection's events to its tables: subscribes from the stored checkpoint, and
 * applies whatever has queued up (up to maxBatch) in one transaction together with the new
 * checkpoint. While catching up the queue is full, so batches are large; when live, events arrive
 * one at a time and are applied one at a time.
 */
export class ProjectionRunner {
  private subscription: Subscription | undefined;
  private stopped = false;
  private done: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly store: EventStore,
    private readonly projection: Projection,
    private readonly options: ProjectionRunnerOptions = DEFAULT_RUNNER_OPTIONS,
    /** Physical table names: identity for the live tables, the shadow ones for a rebuild. */
    private readonly tableName: (table: string) => string = (table) => table,
    /** The checkpoint row's key: the projection's name, or a rebuild's own. */
    private readonly checkpointName: string = projection.name,
  ) {}

  start(): void {
    this.done ??= this.run();
  }

  /** Resolves when the runner has stopped, after the batch in flight (if any) committed or rolled back. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.done;
  }

  /** Resolves when the runner ends on its own (an error stopped it). */
  get finished(): Promise<void> {
    return this.done ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    const checkpoint = await this.readCheckpoint();
    const subscription = this.store.subscribeToAll({
      fromPosition: checkpoint === 0n ? undefined : checkpoint,
      filter: { streamCategories: this.projection.categories },
    });
    this.subscription = subscription;

    const queue: RecordedEvent[] = [];
    let wakeApplier: (() => void) | undefined;
    let wakePump: (() => void) | undefined;
    let pumpEnded = false;
    let pumpError: unknown;

    const pump = (async () => {
      try {
        for await (const event of subscription) {
          queue.push(event);
          wakeApplier?.();
          // Backpressure: let the applier drain before reading further.
          while (queue.length >= this.options.maxBatch * 2 && !this.stopped) {
            await new Promise<void>((resolvePump) => (wakePump = resolvePump));
          }
          if (this.stopped) break;
        }
      } catch (error) {
        pumpError = error;
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
        const batch = queue.splice(0, this.options.maxBatch);
        wakePump?.();
        position = await this.applyWithRetries(batch, position);
      }
    } finally {
      this.stopped = true;
      await subscription.close();
      wakePump?.();
      await pump;
    }
    if (pumpError !== undefined) throw pumpError;
  }

  private async applyWithRetries(batch: RecordedEvent[], from: bigint): Promise<bigint> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.apply(batch, from);
      } catch (error) {
        if (attempt >= this.options.maxAttempts) {
          const message = error instanceof Error ? error.message : String(error);
          await this.markStopped(batch[0].position, message).catch(() => undefined);
          this.options.log?.(`projection ${this.projection.name} stopped at position ${batch[0].position}: ${message}`);
          throw error;
        }
        await sleep(Math.min(100 * 2 ** attempt, 5_000));
      }
    }
  }

  private async apply(batch: RecordedEvent[], from: bigint): Promise<bigint> {
    const client = await this.pool.connect();
    const context: ProjectionContext = {
      table: (name) => {
        if (!this.projection.tables.includes(name)) throw new Error(`invariant: ${this.projection.name} does not own table ${name}`);
        return this.tableName(name);
      },
      query: async <T>(sql: string, params?: readonly unknown[]) => (await client.query(sql, params as unknown[])).rows as T[],
    };
    try {
      await client.query('begin');
      for (const event of batch) await this.projection.handle(event, context);
      const last = batch[batch.length - 1].position;
      // Guarded by the previous position: a second runner that advanced it meanwhile makes this fail.
      const updated = await client.query(
        `update projection_checkpoints set position = $2, events_processed = events_processed + $3, updated_at = now(), state = 'running', error = null, failed_position = null
         where name = $1 and position = $4`,
        [this.checkpointName, last.toString(), batch.length, from.toString()],
      );
      if (updated.rowCount !== 1) throw new Error(`invariant: checkpoint of ${this.checkpointName} moved under this runner`);
      await client.query('commit');
      return last;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  private async readCheckpoint(): Promise<bigint> {
    await this.pool.query('insert into projection_checkpoints (name) values ($1) on conflict (name) do nothing', [this.checkpointName]);
    const { rows } = await this.pool.query<{ position: string }>('select position from projection_checkpoints where name = $1', [this.checkpointName]);
    return BigInt(rows[0].position);
  }

  private async markStopped(position: bigint, error: string): Promise<void> {
    await this.pool.query(`update projection_checkpoints set state = 'stopped', error = $2, failed_position = $3, updated_at = now() where name = $1`, [
      this.checkpointName,
      error.slice(0, 2_000),
      position.toString(),
    ]);
  }
}
