import { Global, Module } from '@nestjs/common';
import type pg from 'pg';
import { PG_POOL } from '../src/database/pool.js';
import { EVENT_STORE, type EventStore } from '../src/event-store/event-store.port.js';
import { PROJECTION_STATUS, type ReadProjectionStatus } from '../src/read-models/projection-status.port.js';
import { PROJECTIONS } from './index.js';
import { readProjectionStatus } from './status/projection-status.js';
import { ProjectionWorkers } from './projection-workers.js';
import { ProjectionLagMetrics } from './status/projection-lag.metrics.js';
import { ProjectionsController } from './status/projections.controller.js';

const projectionStatus = {
  provide: PROJECTION_STATUS,
  inject: [PG_POOL, EVENT_STORE],
  useFactory:
    (pool: pg.Pool, store: EventStore): ReadProjectionStatus =>
    () =>
      readProjectionStatus(pool, store, PROJECTIONS),
};

/** Global for PROJECTION_STATUS only: the operators' console shows the projections without importing projections/. */
@Global()
@Module({ controllers: [ProjectionsController], providers: [ProjectionWorkers, ProjectionLagMetrics, projectionStatus], exports: [PROJECTION_STATUS] })
export class ProjectionsModule {}
