import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type pg from 'pg';
import { PG_POOL } from '../src/database/pool.js';
import { RUNTIME, type Runtime } from '../src/config/runtime.js';
import { EVENT_STORE, type EventStore } from '../src/event-store/event-store.port.js';
import { RUNNING } from './index.js';
import { WorkerPool } from './runner/worker-pool.js';
import type { WorkerSnapshot } from './runner/projection-worker.js';

/**
 * Runs every projection inside the API process when configured to (the embedded default does).
 * Each is a standby until it holds its projection's advisory lock, so several API instances, or an
 * API beside `npm run projections`, never apply one projection twice.
 */
@Injectable()
export class ProjectionWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Projections');
  private workers: WorkerPool | undefined;

  constructor(
    @Inject(RUNTIME) private readonly runtime: Runtime,
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  private get enabled(): boolean {
    const setting = this.runtime.config.runProjections;
    return setting === 'true' || (setting === 'auto' && this.runtime.embedded);
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    this.workers = new WorkerPool(this.pool, this.store, this.runtime.databaseUrl, RUNNING, undefined, this.logger);
    this.workers.start();
  }

  /** This process's workers (empty when they run elsewhere). */
  snapshot(): WorkerSnapshot[] {
    return this.workers?.snapshot() ?? [];
  }

  // Before the core module closes the pool and the event store.
  async beforeApplicationShutdown(): Promise<void> {
    await this.workers?.stop();
  }
}
