import pg from 'pg';
import type { EventStore } from '../../src/event-store/event-store.port.js';
import type { Projection } from '../projection.js';
import { encodeBeacon, LOCK_NAMESPACE, lockKeySql } from './locks.js';
import { DEFAULT_RUNNER_OPTIONS, errorMessage, ProjectionRunner, type ProjectionRunnerOptions, type RunnerLog } from './projection-runner.js';
import { RunnerMetrics } from './runner-metrics.js';

export interface ProjectionWorkerOptions {
  readonly runner: ProjectionRunnerOptions;
  /** How often a standby tries to take the lock, and the active one checks its lock connection. */
  readonly heartbeatMs: number;
  /** How often a stopped projection checks whether someone (a rebuild, an operator) cleared its stop. */
  readonly stoppedPollMs: number;
}

export const DEFAULT_WORKER_OPTIONS: ProjectionWorkerOptions = { runner: DEFAULT_RUNNER_OPTIONS, heartbeatMs: 1_000, stoppedPollMs: 5_000 };

export type WorkerRole = 'standby' | 'active' | 'stopped';

export interface WorkerSnapshot {
  readonly name: string;
  readonly role: WorkerRole;
  readonly state: string;
  readonly position: string;
  readonly eventsPerSecond: number;
  readonly lastEventAt: string | null;
}

const silent: RunnerLog = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * One projection in one process: a standby that tries the projection's advisory lock every
 * heartbeat, and, once it holds it, the active runner. The lock lives on a dedicated connection:
 * when the process dies (kill -9 included) PostgreSQL ends that session and frees the lock, and a
 * standby elsewhere takes over at its next heartbeat. Should the lock connection drop while this
 * process lives, the runner is stopped at once; the checkpoint guard makes a batch still in flight
 * harmless.
 */
export class ProjectionWorker {
  private lockClient: pg.Client | undefined;
  private lockLost = false;
  private runner: ProjectionRunner | undefined;
  private runnerEnded: { error: unknown } | undefined;
  private role: WorkerRole = 'standby';
  private stopping = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private metrics = new RunnerMetrics();
  private readonly logger: RunnerLog;

  constructor(
    private readonly pool: pg.Pool,
    private readonly store: EventStore,
    private readonly databaseUrl: string,
    readonly projection: Projection,
    private readonly options: ProjectionWorkerOptions = DEFAULT_WORKER_OPTIONS,
    logger?: RunnerLog,
  ) {
    this.logger = logger ?? silent;
  }

  start(): void {
    this.loop ??= this.run();
  }

  get isActive(): boolean {
    return this.role !== 'standby';
  }

  snapshot(): WorkerSnapshot {
    return {
      name: this.projection.name,
      role: this.role,
      state: this.role === 'standby' ? 'standby' : this.metrics.state,
      position: this.metrics.position.toString(),
      eventsPerSecond: Math.round(this.metrics.eventsPerSecond()),
      lastEventAt: this.metrics.lastEventAt?.toISOString() ?? null,
    };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.tick();
      } catch (error) {
        // Any failure of the lock connection: back to standby, with a fresh connection next time.
        this.logger.warn(`${this.projection.name}: lock connection failed (${errorMessage(error)}); back to standby`);
        await this.demote();
      }
      if (!this.stopping) await this.sleep(this.role === 'stopped' ? this.options.stoppedPollMs : this.options.heartbeatMs);
    }
    await this.demote();
  }

  private async tick(): Promise<void> {
    if (this.lockLost) throw new Error('the lock connection was lost');
    const client = await this.connectLock();
    if (this.role === 'standby') {
      const { rows } = await client.query<{ locked: boolean }>(`select pg_try_advisory_lock(${LOCK_NAMESPACE.active}, ${lockKeySql('$1::text')}) as locked`, [this.projection.name]);
      if (!rows[0].locked) return;
      this.role = 'active';
      this.logger.log(`${this.projection.name}: active in process ${process.pid}`);
      this.startRunner();
    } else if (this.runnerEnded !== undefined) {
      // The runner stopped at an event. Resume once the stop is cleared (a rebuild swapped in
      // fixed tables, or an operator reset the checkpoint); otherwise keep the lock and report.
      const { rows } = await this.pool.query<{ state: string }>('select state from projection_checkpoints where name = $1', [this.projection.name]);
      if (rows[0]?.state !== 'stopped') {
        this.logger.log(`${this.projection.name}: the stop was cleared, resuming`);
        this.startRunner();
      } else {
        this.role = 'stopped';
      }
    }
    // The heartbeat: publishes the figures, and proves the lock connection is alive.
    await client.query('select set_config($1, $2, false)', ['application_name', this.beacon()]);
  }

  private beacon(): string {
    const state = this.role === 'stopped' || this.metrics.state === 'stopped' ? 'stopped' : this.metrics.state === 'running' ? 'running' : 'catching_up';
    return encodeBeacon({ state, eventsPerSecond: this.metrics.eventsPerSecond(), pid: process.pid });
  }

  private startRunner(): void {
    this.metrics = new RunnerMetrics();
    this.role = 'active';
    this.runnerEnded = undefined;
    const runner = new ProjectionRunner(this.pool, this.store, this.projection, { ...this.options.runner, metrics: this.metrics, logger: this.logger });
    this.runner = runner;
    runner.start();
    runner.finished.then(
      () => {
        if (this.runner === runner && !runner.isStopping) this.runnerEnded = { error: undefined };
      },
      (error: unknown) => {
        if (this.runner !== runner) return;
        this.runnerEnded = { error };
        this.role = 'stopped';
        this.wake?.();
      },
    );
  }

  private async connectLock(): Promise<pg.Client> {
    if (this.lockClient !== undefined) return this.lockClient;
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'proj-standby', keepAlive: true, connectionTimeoutMillis: 5_000 });
    client.on('error', () => {
      if (this.lockClient !== client) return;
      this.lockLost = true;
      // Stop applying at once: another process may take the lock now.
      void this.runner?.stop();
      this.wake?.();
    });
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.lockClient = client;
    this.lockLost = false;
    return client;
  }

  /** Stops the runner and gives the lock back (by ending its session). */
  private async demote(): Promise<void> {
    const runner = this.runner;
    this.runner = undefined;
    this.runnerEnded = undefined;
    await runner?.stop();
    if (this.role !== 'standby' && !this.stopping) this.logger.log(`${this.projection.name}: standby`);
    this.role = 'standby';
    const client = this.lockClient;
    this.lockClient = undefined;
    this.lockLost = false;
    await client?.end().catch(() => undefined);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolveSleep) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolveSleep();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolveSleep();
      };
    });
  }
}
