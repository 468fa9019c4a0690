import { Controller, Get, Inject, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiQuery } from '@nestjs/swagger';
import { AdminGuard } from '../common/admin.guard.js';
import { ADMIN_ERRORS, ANY_ROUTE_ERRORS, ApiErrors, ApiPaging, ApiPathParam, ApiRoute, ApiSuccess, ENVIRONMENT, ORGANIZATION_ID, ref } from '../common/openapi.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import { isEnvironment, type Environment } from '../common/environment.js';
import { ValidationFailed, type FieldError } from '../common/errors.js';
import { paging } from '../common/paging.js';
import { isoWithOffset, parseIsoInstant } from '../common/time.js';
import { EVENT_STORE, type EventStore } from '../event-store/event-store.port.js';
import { assertOrganizationExists } from '../wallets/organization-exists.js';
import { entryJson } from './audit-format.js';
import { WalletHistory } from './wallet-history.js';

function asOfOf(value: unknown, errors: FieldError[]): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = typeof value === 'string' ? parseIsoInstant(value) : undefined;
  if (parsed === undefined) {
    errors.push({ field: 'asOf', message: 'asOf must be an ISO 8601 date-time with an offset, e.g. 2026-03-03T14:00:00+01:00' });
    return undefined;
  }
  return parsed;
}

/**
 * The auditor's replay over HTTP: the same entries, figures and chain verification as
 * `npm run audit:wallet`, read from the event log, never from the read models. A request replays
 * the stream from the nearest verified history checkpoint before its page (and before the end or
 * `asOf`, for the figures), not from its start: wallet-history.ts.
 */
@ApiBearerAuth('adminToken')
@Controller('admin/v1/organizations/:id/wallets/:environment/history')
@UseGuards(AdminGuard)
export class WalletHistoryController {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(WalletHistory) private readonly walletHistory: WalletHistory,
  ) {}

  @Get()
  @ApiRoute(
    'getWalletHistory',
    'Admin: audit',
    'Replay a wallet history from the event log',
    'Every entry (funding, reservation, debit, release) oldest first, with the running balance, reserved and available figures after it; meta holds the paging, the balance as of asOf, totals per entry type and the hash chain verification. Read from the event log, never the read models. Admin and auditor tokens.',
  )
  @ApiPathParam('id', ORGANIZATION_ID, 'the organization')
  @ApiPathParam('environment', ENVIRONMENT, 'the wallet')
  @ApiQuery({
    name: 'asOf',
    required: false,
    description: 'ISO 8601 with an offset: the replay ends before the first event that occurred after it',
    schema: { type: 'string', format: 'date-time' },
  })
  @ApiPaging()
  @ApiSuccess(200, 'A page of entries, oldest first', { type: 'array', items: ref('HistoryEntry') }, ref('HistoryMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, ADMIN_ERRORS)
  async history(
    @Param('id') organizationId: string,
    @Param('environment') environment: string,
    @Query() query: Record<string, unknown>,
  ): Promise<SuccessEnvelope<Record<string, unknown>[]>> {
    const errors: FieldError[] = [];
    if (!isEnvironment(environment)) errors.push({ field: 'environment', message: 'environment must be "test" or "live"' });
    const asOf = asOfOf(query?.asOf, errors);
    let page = 1;
    let pageSize = 20;
    try {
      ({ page, pageSize } = paging(query ?? {}));
    } catch (error) {
      if (!(error instanceof ValidationFailed)) throw error;
      errors.push(...error.fields);
    }
    if (errors.length > 0) throw new ValidationFailed(errors);
    await assertOrganizationExists(this.store, organizationId);

    const { entries, summary } = await this.walletHistory.page({ organizationId, environment: environment as Environment }, { page, pageSize, asOf });
    return ok(entries.map(entryJson), {
      total: summary.entriesShown,
      page,
      pageSize,
      totalPages: Math.ceil(summary.entriesShown / pageSize),
      asOf: asOf === undefined ? null : isoWithOffset(asOf),
      lastRevision: summary.lastRevision,
      balance: summary.closing,
      totals: summary.totals,
      openReservations: summary.openReservations,
      chain: summary.chain,
      ledgerProblems: summary.ledgerProblems,
    });
  }
}
