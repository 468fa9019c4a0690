import { Controller, Get, Inject, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiHeader, ApiSecurity } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type pg from 'pg';
import { AnyOrganizationStatus, ApiKeyGuard, authenticatedKey, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import type { Environment } from '../common/environment.js';
import { ANY_ROUTE_ERRORS, ApiErrors, ApiPaging, ApiRoute, ApiSuccess, KEY_ERRORS, ref } from '../common/openapi.js';
import { paging } from '../common/paging.js';
import { PG_POOL } from '../database/pool.js';
import { CONSISTENCY_TOKEN_DESCRIPTION, ReadYourWrites } from '../read-models/read-your-writes.js';
import type { WalletBalance } from './wallet-ledger.port.js';
import { readWalletBalance, readWalletTransactions, type TransactionView, WALLET_LEDGER_PROJECTION, WALLETS_PROJECTION } from './wallet.read-model.js';

export interface IntegratorWalletView extends WalletBalance {
  readonly environment: Environment;
}

/**
 * The integrator's own wallet, for the key's environment, from the `wallets` and `wallet_ledger`
 * read models, once they show the key's own writes (ReadYourWrites). Readable whatever the
 * organization's status (a suspended one still sees its balance).
 */
@ApiSecurity('serviceKey')
@ApiHeader({ name: 'X-Consistency-Token', required: false, description: CONSISTENCY_TOKEN_DESCRIPTION })
@Controller('v1/wallet')
@UseGuards(ApiKeyGuard)
@AnyOrganizationStatus()
export class WalletController {
  constructor(
    @Inject(PG_POOL) private readonly pool: pg.Pool,
    @Inject(ReadYourWrites) private readonly readYourWrites: ReadYourWrites,
  ) {}

  @Get()
  @ApiRoute(
    'getWallet',
    'Wallet',
    'Get the wallet balance',
    "The balance, reserved and available amounts of the key's environment's wallet, in kobo. A check needs its price available.",
  )
  @ApiSuccess(200, 'The wallet', ref('Wallet'))
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
  async get(@Req() request: KeyedRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<SuccessEnvelope<IntegratorWalletView>> {
    const key = authenticatedKey(request);
    await this.readYourWrites.beforeRead(request, reply, key, 'wallet', [WALLETS_PROJECTION]);
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
  @ApiErrors(ANY_ROUTE_ERRORS, KEY_ERRORS)
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
