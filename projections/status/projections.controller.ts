import { Controller, Get, Inject, UseGuards } from '@nestjs/common';
import type pg from 'pg';
import { AdminGuard } from '../../src/common/admin.guard.js';
import { ok } from '../../src/common/envelope.js';
import { PG_POOL } from '../../src/database/pool.js';
import { EVENT_STORE, type EventStore } from '../../src/event-store/event-store.port.js';
import { PROJECTIONS } from '../index.js';
import { readProjectionStatus } from './projection-status.js';

/** Engineers watch projection lag here (and with `npm run projections:status`). */
@Controller('admin/v1/projections')
@UseGuards(AdminGuard)
export class ProjectionsController {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(EVENT_STORE) private readonly store: EventStore,
  ) {}

  @Get()
  async list() {
    return ok(await readProjectionStatus(this.pool, this.store, PROJECTIONS));
  }
}
