import pg from 'pg';
import type { EventStore } from '../../src/event-store/event-store.port.js';
import type { Projection } from '../projection.js';
import { encodeBeacon, LOCK_NAMESPACE, lockKeySql } from './locks.js';
import { DEFAULT_RUNNER_OPTIONS, errorMessage, LeadershipLostError, ProjectionRunner, type ProjectionRunnerOptions, type RunnerLog } from './projection-runner.js';
import { RunnerMetrics } from './runner-metrics.js';

export interface ProjectionWorkerOptions {
  readonly runner: ProjectionRunnerOptions;
  /** How often a standby tries to take the lock, and the active one checks its lock connection. */
  readonly heartbeatMs: number;
  /** How often a stopped projection checks whether someone (a rebuild, an operator) cleared its stop. */
  readonly stoppedPollMs: number;
  /**
   * The most a statement on the lock connection (a heartbeat, a check of the lock) may take; past
   * it the lock is taken as lost: the runner stops and the worker goes back to standby.
   */
  readonly lockTimeoutMs?: number;
}

export const DEFAULT_WORKER_OPTIONS: ProjectionWorkerOptions = { runner: DEFAULT_RUNNER_OPTIONS, heartbeatMs: 1_000, stoppedPollMs: 5_000, lockTimeoutMs: 10_000 };

/**
 * How PostgreSQL finds out that the host holding a lock is gone. An advisory lock lives as long as
 * its session, and an idle session whose host died or was cut off is only noticed by TCP: with the
 * operating system's defaults, after two hours. On the lock connection the server sends a keepalive
 * after 10 s of silence and every 5 s after, and ends the session after 3 unanswered (25 s);
 * tcp_user_timeout ends it when data it sent stays unacknowledged for 30 s; and while a statement
 * runs, client_connection_check_interval looks for a closed peer every 5 s. A standby then takes
 * the lock at its next heartbeat: a dead host's projection resumes elsewhere within about 30 s.
 * (On a Unix socket the TCP settings do nothing; there is no network to lose.)
 */
export const LOCK_SESSION_SETTINGS: Readonly<Record<string, string>> = {
  tcp_keepalives_idle: '10',
  tcp_keepalives_interval: '5',
  tcp_keepalives_count: '3',
  tcp_user_timeout: '30000',
  client_connection_check_interval: '5000',
};

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
 * standby elsewhere takes over at its next heartbeat; when its host dies or is cut off, PostgreSQL
 * notices within about 30 s (LOCK_SESSION_SETTINGS). Should the lock connection drop, or a heartbeat
 * go unanswered for lockTimeoutMs, while this process lives, the runner is stopped at once; the
 * checkpoint guard makes a batch still in flight harmless. A runner whose checkpoint another runner
 * moved (this process lost the lock without noticing) steps down instead of competing.
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
      const { rows } = await this.onLock<{ locked: boolean }>(client, `select pg_try_advisory_lock(${LOCK_NAMESPACE.active}, ${lockKeySql('$1::text')}) as locked`, [
        this.projection.name,
      ]);
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
    await this.onLock(client, 'select set_config($1, $2, false)', ['application_name', this.beacon()]);
  }

  /** A statement on the lock connection, bounded by lockTimeoutMs: past it the connection counts as lost. */
  private async onLock<T extends pg.QueryResultRow>(client: pg.Client, text: string, values: unknown[]): Promise<pg.QueryResult<T>> {
    const timeoutMs = this.options.lockTimeoutMs ?? DEFAULT_WORKER_OPTIONS.lockTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the lock connection did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([client.query<T>(text, values), timedOut]);
    } catch (error) {
      if (this.lockClient === client) this.lockLost = true;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Whether this process still holds the projection's lock, asked on its lock connection when the
   * checkpoint moved under the runner: a rebuild's swap moves it under a holder, another runner
   * moves it only when the lock went elsewhere. No answer within lockTimeoutMs is a no.
   */
  private async holdsLock(): Promise<boolean> {
    const client = this.lockClient;
    if (client === undefined || this.lockLost) return false;
    try {
      const { rows } = await this.onLock<{ held: boolean }>(
        client,
        `select exists (select 1 from pg_locks where locktype = 'advisory' and granted and pid = pg_backend_pid() and classid = ${LOCK_NAMESPACE.active}
           and objid = oid(${lockKeySql('$1::text')}::bigint & 4294967295) and objsubid = 2) as held`,
        [this.projection.name],
      );
      return rows[0].held;
    } catch {
      return false;
    }
  }

  private beacon(): string {
    const state = this.role === 'stopped' || this.metrics.state === 'stopped' ? 'stopped' : this.metrics.state === 'running' ? 'running' : 'catching_up';
    return encodeBeacon({ state, eventsPerSecond: this.metrics.eventsPerSecond(), pid: process.pid });
  }

  private startRunner(): void {
    this.metrics = new RunnerMetrics();
    this.role = 'active';
    this.runnerEnded = undefined;
    const runner = new ProjectionRunner(this.pool, this.store, this.projection, {
      ...this.options.runner,
      metrics: this.metrics,
      logger: this.logger,
      mayResumeAfterMove: () => this.holdsLock(),
    });
    this.runner = runner;
    runner.start();
    runner.finished.then(
      () => {
        if (this.runner === runner && !runner.isStopping) this.runnerEnded = { error: undefined };
      },
      (error: unknown) => {
        if (this.runner !== runner) return;
        if (error instanceof LeadershipLostError) {
          // Back to standby, with a fresh lock connection at the next heartbeat (run() demotes).
          this.lockLost = true;
          this.wake?.();
          return;
        }
        this.runnerEnded = { error };
        this.role = 'stopped';
        this.wake?.();
      },
    );
  }

  private async connectLock(): Promise<pg.Client> {
    if (this.lockClient !== undefined) return this.lockClient;
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: 'proj-standby',
      // The client's side of the same question: a server gone silent is given up after about as long.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: 5_000,
    });
    client.on('error', () => {
      if (this.lockClient !== client) return;
      this.lockLost = true;
      // Stop applying at once: another process may take the lock now.
      void this.runner?.stop();
      this.wake?.();
    });
    try {
      await client.connect();
      const names = Object.keys(LOCK_SESSION_SETTINGS);
      await client.query(
        `select ${names.map((_, index) => `set_config($${index * 2 + 1}, $${index * 2 + 2}, false)`).join(', ')}`,
        names.flatMap((name) => [name, LOCK_SESSION_SETTINGS[name]]),
      );
    } catch (error) {
      await endLockClient(client);
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
    if (client !== undefined) await endLockClient(client);
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

/** How long ending the lock connection may take before its socket is dropped (a silent peer never answers the goodbye). */
const END_LOCK_CLIENT_MS = 1_000;

/** Ends a lock connection, bounded: the socket of a connection whose peer went silent is destroyed. */
async function endLockClient(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    client.end().then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolveWait) => {
      timer = setTimeout(() => resolveWait(false), END_LOCK_CLIENT_MS);
    }),
  ]);
  clearTimeout(timer);
  if (!ended) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
