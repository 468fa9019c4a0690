import { Global, Module } from '@nestjs/common';
import { ProjectionWaiter } from './projection-waiter.js';
import { ProjectionWorkers } from './projection-workers.js';
import { ProjectionLagMetrics } from './status/projection-lag.metrics.js';
import { ProjectionsController } from './status/projections.controller.js';

@Global()
@Module({ controllers: [ProjectionsController], providers: [ProjectionWaiter, ProjectionWorkers, ProjectionLagMetrics], exports: [ProjectionWaiter] })
export class ProjectionsModule {}
