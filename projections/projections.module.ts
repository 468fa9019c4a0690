import { Global, Module } from '@nestjs/common';
import { ProjectionWaiter } from './projection-waiter.js';
import { ProjectionWorkers } from './projection-workers.js';

@Global()
@Module({ providers: [ProjectionWaiter, ProjectionWorkers], exports: [ProjectionWaiter] })
export class ProjectionsModule {}
