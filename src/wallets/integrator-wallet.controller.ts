import { Controller, Get, Inject, Query, Req, UseGuards } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import type pg from 'pg';
import { ApiKeyGuard, authenticatedKey, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import type { Environment } from '../common/environment.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiPaging, ApiRoute, ApiSuccess, KEY_ERRORS, ORGANIZATION_STATE_ERRORS, ref } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { PG_POOL } from '../database/pool.js';
import type { WalletBalance } from './wallet-ledger.port.js';
import { readWalletBalance, readWalletTransactions, type TransactionView } from './wallet.read-model.js';

export interface IntegratorWalletView extends WalletBalance {
  readonly environment: Environment;
}

/** The integrator's own wallet, for the key's environment, from the `wallets` and `wallet_ledger` read models. */
@ApiSecurity('serviceKey')
@Controller('v1/wallet')
@UseGuards(ApiKeyGuard)
export class WalletController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  @Get()
  @ApiRoute('getWallet', 'Wallet', 'Get the wallet balance', "The balance, reserved and available amounts of the key's environment's wallet, in kobo. A check needs its price available.")
  @ApiSuccess(200, 'The wallet', ref('Wallet'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, ORGANIZATION_STATE_ERRORS)
  async get(@Req() request: KeyedRequest): Promise<SuccessEnvelope<IntegratorWalletView>> {
    const key = authenticatedKey(request);
    return ok({ environment: key.environment, ...(await readWalletBalance(this.pool, key.organizationId, key.environment)) });
  }

  @Get('transactions')
  @ApiRoute(
    'listWalletTransactions',
    'Wallet',
    'List wallet transactions',
    "The wallet's ledger for the key's environment, most recent first: fundings, reservations, debits and releases, each with the figures after it.",
  )
  @ApiPaging()
  @ApiSuccess(200, 'A page of transactions, most recent first', { type: 'array', items: ref('WalletTransaction') }, ref('PagingMeta'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS, ORGANIZATION_STATE_ERRORS)
  async transactions(@Req() request: KeyedRequest, @Query() query: Record<string, unknown>): Promise<SuccessEnvelope<TransactionView[]>> {
    const key = authenticatedKey(request);
    const { page, pageSize } = paging(query ?? {});
    const { total, transactions } = await readWalletTransactions(this.pool, key.organizationId, key.environment, page, pageSize);
    return ok(transactions, { total, page, pageSize, totalPages: Math.ceil(total / pageSize) });
  }
}
