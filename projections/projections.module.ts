import { Module } from '@nestjs/common';
import { ProjectionWorkers } from './projection-workers.js';
import { ProjectionLagMetrics } from './status/projection-lag.metrics.js';
import { ProjectionsController } from './status/projections.controller.js';

@Module({ controllers: [ProjectionsController], providers: [ProjectionWorkers, ProjectionLagMetrics] })
export class ProjectionsModule {}
