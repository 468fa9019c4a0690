import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import type pg from 'pg';
import { AdminGuard } from '../common/admin.guard.js';
import { ok } from '../common/envelope.js';
import { ADMIN_ERRORS, ANY_ROUTE_ERRORS, ApiErrors, ApiPaging, ApiRoute, ApiSuccess, ref, type Schema } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { PG_POOL } from '../database/pool.js';
import { readUnsettledChecks } from './recovery-unsettled.read-model.js';

const UNSETTLED_CHECK: Schema = {
  type: 'object',
  required: ['reference', 'organizationId', 'environment', 'reason', 'attempts', 'firstFailedAt', 'lastFailedAt', 'nextAttemptAt'],
  properties: {
    reference: { type: 'string', example: 'vrf_01J5Z8Q4W3N6T9R2K7M1B4C8D5' },
    organizationId: { type: 'string' },
    environment: { type: 'string', enum: ['test', 'live'] },
    reason: {
      type: 'string',
      description: 'an error code, and for a damaged stream its id and damage (never personal data)',
      example: 'stream_damaged: wallet-org_01J5Z8Q4W3.test is deleted',
    },
    attempts: { type: 'integer', minimum: 1 },
    firstFailedAt: { type: 'string', format: 'date-time' },
    lastFailedAt: { type: 'string', format: 'date-time' },
    nextAttemptAt: { type: 'string', format: 'date-time', description: 'recovery tries again from then, waiting twice as long after each failure (at most an hour)' },
  },
};

/** Operators see here which checks recovery cannot settle, so that they restore what was damaged. */
@ApiBearerAuth('adminToken')
@Controller('admin/v1/recovery')
@UseGuards(AdminGuard)
export class RecoveryController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  @Get('unsettled')
  @ApiRoute(
    'listUnsettledChecks',
    'Operations',
    'List the checks recovery cannot settle',
    'Checks left open past the recovery deadline whose reservation recovery could not capture or release (a stream damaged by hand, an event it cannot fold): their money stays held until the cause is restored. Oldest first. Admin and auditor tokens.',
  )
  @ApiPaging()
  @ApiSuccess(200, 'A page of unsettled checks', { type: 'array', items: UNSETTLED_CHECK }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async list(@Query() query: Record<string, unknown>) {
    const { page, pageSize } = paging(query);
    const { checks, total } = await readUnsettledChecks(this.pool, page, pageSize);
    return ok(checks, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }
}
