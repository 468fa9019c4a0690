import { Controller, Get, Inject, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, type KeyedRequest } from '../auth/api-key.guard.js';
import { ErrorEnvelopeDto } from '../common/api.dto.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import type { Environment } from '../common/environment.js';
import { paging } from '../common/paging.js';
import { PG_POOL } from '../database/pool.js';
import { CONSISTENCY_TOKEN_DESCRIPTION, ReadYourWrites } from '../read-models/read-your-writes.js';
import type { WalletBalance } from './wallet-ledger.port.js';
import { readWalletBalance, readWalletTransactions, type TransactionView, WALLET_LEDGER_PROJECTION, WALLETS_PROJECTION } from './wallet.read-model.js';
import { TransactionListEnvelopeDto } from './wallet-transactions.dto.js';

export interface IntegratorWalletView extends WalletBalance {
  readonly environment: Environment;
}

/**
 * The integrator's own wallet, for the key's environment, from the `wallets` and `wallet_ledger`
 * read models, once they show the key's own writes (ReadYourWrites). Readable whatever the
 * organization's status (a suspended one still sees its balance).
 */
@ApiTags('wallet')
@ApiSecurity('serviceKey')
@ApiHeader({ name: 'X-Service-Key', required: true, description: 'service_test_… or service_live_…' })
@ApiHeader({ name: 'X-Consistency-Token', required: false, description: CONSISTENCY_TOKEN_DESCRIPTION })
@ApiResponse({ status: 503, description: 'service_unavailable: the read models did not show the key\'s latest writes (or the token\'s) within 2 s, or a store is unavailable', type: ErrorEnvelopeDto })
@Controller('v1/wallet')
@UseGuards(ApiKeyGuard)
@AnyOrganizationStatus()
export class WalletController {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
  ) {}

  @Get()
  async get(@Req() request: KeyedRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<SuccessEnvelope<IntegratorWalletView>> {
    const key = authenticatedKey(request);
    await this.readYourWrites.beforeRead(request, reply, key, 'wallet', [WALLETS_PROJECTION]);
    return ok({ environment: key.environment, ...(await readWalletBalance(this.pool, key.organizationId, key.environment)) });
  }

  @Get('transactions')
  @ApiOperation({ summary: "The wallet's ledger for the key's environment, most recent first: fundings, reservations, debits and releases, each with the balance after it" })
  @ApiQuery({ name: 'page', required: false, description: 'from 1; default 1' })
  @ApiQuery({ name: 'pageSize', required: false, description: '1 to 100, default 20; above 100 is capped to 100' })
  @ApiResponse({ status: 200, type: TransactionListEnvelopeDto })
  @ApiResponse({ status: 401, description: 'unauthenticated: missing, unknown or revoked X-Service-Key', type: ErrorEnvelopeDto })
  @ApiResponse({ status: 422, description: 'validation_failed: page or pageSize invalid, or X-Consistency-Token malformed', type: ErrorEnvelopeDto })
  async transactions(
    @Req() request: KeyedRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Query() query: Record<string, unknown>,
  ): Promise<SuccessEnvelope<TransactionView[]>> {
    const key = authenticatedKey(request);
    const { page, pageSize } = paging(query ?? {});
    await this.readYourWrites.beforeRead(request, reply, key, 'wallet', [WALLET_LEDGER_PROJECTION]);
    const { total, transactions } = await readWalletTransactions(this.pool, key.organizationId, key.environment, page, pageSize);
    return ok(transactions, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }
}
