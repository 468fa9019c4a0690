import { Inject, Injectable, Logger, type OnApplicationBootstrap, type BeforeApplicationShutdown } from '@nestjs/common';
import type pg from 'pg';
import { PG_POOL, RUNTIME, type Runtime } from '../src/core.module.js';
import { EVENT_STORE, type EventStore } from '../src/event-store/event-store.port.js';
import { PROJECTIONS } from './index.js';
import { ProjectionRunner } from './runner/projection-runner.js';

/** Runs every projection inside the API process when configured to (the embedded default does). */
@Injectable()
export class ProjectionWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Projections');
  private readonly runners: ProjectionRunner[] = [];

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
    for (const projection of PROJECTIONS) {
      const runner = new ProjectionRunner(this.pool, this.store, projection, undefined);
      runner.start();
      runner.finished.catch((error: unknown) => this.logger.error(`${projection.name} stopped: ${error instanceof Error ? error.message : String(error)}`));
      this.runners.push(runner);
    }
  }

  // Before the core module closes the pool and the event store.
  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all(this.runners.map((runner) => runner.stop().catch(() => undefined)));
  }
}
