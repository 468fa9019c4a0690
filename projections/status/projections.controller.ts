import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import type pg from 'pg';
import { AdminGuard } from '../../src/common/admin.guard.js';
import { ok } from '../../src/common/envelope.js';
import { ADMIN_ERRORS, ANY_ROUTE_ERRORS, ApiErrors, ApiRoute, ApiSuccess, ref } from '../../src/common/openapi.js';
import { PG_POOL } from '../../src/database/pool.js';
import { EVENT_STORE, type EventStore } from '../../src/event-store/event-store.port.js';
import { PROJECTIONS } from '../index.js';
import { readProjectionStatus } from './projection-status.js';

/** Engineers watch projection lag here (and with `npm run projections:status`). */
@ApiBearerAuth('adminToken')
@Controller('admin/v1/projections')
@UseGuards(AdminGuard)
export class ProjectionsController {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Get()
  @ApiRoute(
    'getProjectionStatus',
    'Operations',
    'Get the projections status',
    'Each read model: its checkpoint, lag, worker and state (also `npm run projections:status`). Admin and auditor tokens.',
  )
  @ApiSuccess(200, 'Every projection', { type: 'array', items: ref('ProjectionStatus') })
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async list() {
    return ok(await readProjectionStatus(this.pool, this.store, PROJECTIONS));
  }
}
