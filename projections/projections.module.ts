import { Global, Module } from '@nestjs/common';
import { ProjectionWaiter } from './projection-waiter.js';
import { ProjectionWorkers } from './projection-workers.js';
import { ProjectionsController } from './status/projections.controller.js';

@Global()
@Module({ controllers: [ProjectionsController], providers: [ProjectionWaiter, ProjectionWorkers], exports: [ProjectionWaiter] })
export class ProjectionsModule {}
