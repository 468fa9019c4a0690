import { Controller, Get, Inject, Query, Req, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type pg from 'pg';
import { readWalletBalance } from '../../projections/wallets/wallets.projection.js';
import { ApiKeyGuard, authenticatedKey, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import type { Environment } from '../common/environment.js';
import { isoWithOffset } from '../common/time.js';
import { PG_POOL } from '../database/pool.js';
import { paging } from '../organizations/organization.dto.js';
import { ErrorEnvelopeDto } from '../verifications/verification.dto.js';
import type { WalletBalance } from './wallet-ledger.port.js';
import { TransactionListEnvelopeDto } from './wallet-history.dto.js';

export interface IntegratorWalletView extends WalletBalance {
  readonly environment: Environment;
}

export interface TransactionView {
  readonly type: string;
  readonly reference: string;
  readonly scope: string | null;
  readonly amountKobo: number;
  readonly balanceKobo: number;
  readonly reservedKobo: number;
  readonly availableKobo: number;
  readonly createdAt: string;
}

interface LedgerRow {
  entry_type: string;
  reference: string;
  scope: string | null;
  amount_kobo: string;
  balance_kobo: string;
  reserved_kobo: string;
  available_kobo: string;
  occurred_at: Date;
}

/** The integrator's own wallet, for the key's environment, from the `wallets` and `wallet_ledger` read models. */
@ApiTags('wallet')
@ApiSecurity('serviceKey')
@ApiHeader({ name: 'X-Service-Key', required: true, description: 'service_test_… or service_live_…' })
@Controller('v1/wallet')
@UseGuards(ApiKeyGuard)
export class WalletController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  @Get()
  async get(@Req() request: KeyedRequest): Promise<SuccessEnvelope<IntegratorWalletView>> {
    const key = authenticatedKey(request);
    return ok({ environment: key.environment, ...(await readWalletBalance(this.pool, key.organizationId, key.environment)) });
  }

  @Get('transactions')
  @ApiOperation({ summary: "The wallet's ledger for the key's environment, most recent first: fundings, reservations, debits and releases, each with the balance after it" })
  @ApiQuery({ name: 'page', required: false, description: 'from 1; default 1' })
  @ApiQuery({ name: 'pageSize', required: false, description: '1 to 100, default 20; above 100 is capped to 100' })
  @ApiResponse({ status: 200, type: TransactionListEnvelopeDto })
  @ApiResponse({ status: 401, description: 'unauthenticated: missing, unknown or revoked X-Service-Key', type: ErrorEnvelopeDto })
  @ApiResponse({ status: 422, description: 'validation_failed: page or pageSize invalid', type: ErrorEnvelopeDto })
  async transactions(@Req() request: KeyedRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<TransactionView[]>> {
    const key = authenticatedKey(request);
    const { page, pageSize } = paging(query ?? {});
    const wallet = [key.organizationId, key.environment];
    // One row per wallet event, on the ledger's primary key: an index-only count and an ordered index scan.
    const counted = await this.pool.query<{ total: string }>('select count(*) as total from wallet_ledger where organization_id = $1 and environment = $2', wallet);
    const total = Number(counted.rows[0].total);
    const { rows } = await this.pool.query<LedgerRow>(
      `select entry_type, reference, scope, amount_kobo, balance_kobo, reserved_kobo, available_kobo, occurred_at from wallet_ledger
        where organization_id = $1 and environment = $2 order by event_position desc limit $3 offset $4`,
      [...wallet, pageSize, (page - 1) * pageSize],
    );
    const data = rows.map((row) => ({
      type: row.entry_type,
      reference: row.reference,
      scope: row.scope,
      amountKobo: Number(row.amount_kobo),
      balanceKobo: Number(row.balance_kobo),
      reservedKobo: Number(row.reserved_kobo),
      availableKobo: Number(row.available_kobo),
      createdAt: isoWithOffset(row.occurred_at),
    }));
    return ok(data, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }
}
