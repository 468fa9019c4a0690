import type pg from 'pg';
import type { EventStore } from '../../src/event-store/event-store.port.js';
import type { Projection } from '../projection.js';
import type { RunnerLog } from './projection-runner.js';
import { DEFAULT_WORKER_OPTIONS, ProjectionWorker, type ProjectionWorkerOptions, type WorkerSnapshot } from './projection-worker.js';

/** Every projection's worker in one process: the API's in-process workers and `npm run projections` alike. */
export class WorkerPool {
  private readonly workers: ProjectionWorker[];

  constructor(
    pool: pg.Pool,
    store: EventStore,
    databaseUrl: string,
    projections: readonly Projection[],
    options: ProjectionWorkerOptions = DEFAULT_WORKER_OPTIONS,
    logger?: RunnerLog,
  ) {
    const names = new Set<string>();
    for (const projection of projections) {
      if (names.has(projection.name)) throw new Error(`invariant: two projections are named ${projection.name}`);
      names.add(projection.name);
    }
    this.workers = projections.map((projection) => new ProjectionWorker(pool, store, databaseUrl, projection, options, logger));
  }

  start(): void {
    for (const worker of this.workers) worker.start();
  }

  snapshot(): WorkerSnapshot[] {
    return this.workers.map((worker) => worker.snapshot());
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.stop()));
  }
}
