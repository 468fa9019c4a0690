import { Controller, Get, Inject, Req, UseGuards } from '@nestjs/common';
import type pg from 'pg';
import { readWalletBalance } from '../../projections/wallets/wallets.projection.js';
import { ApiKeyGuard, authenticatedKey, type KeyedRequest } from '../auth/api-key.guard.js';
import { ok, type SuccessEnvelope } from '../common/envelope.js';
import type { Environment } from '../common/environment.js';
import { PG_POOL } from '../core.module.js';
import type { WalletBalance } from './wallet-ledger.port.js';

export interface IntegratorWalletView extends WalletBalance {
  readonly environment: Environment;
}

/** The integrator's own wallet, for the key's environment, from the `wallets` read model. */
@Controller('v1/wallet')
@UseGuards(ApiKeyGuard)
export class WalletController {
  constructor(@Inject(PG_POOL) private readonly pool: pg.Pool) {}

  @Get()
  async get(@Req() request: KeyedRequest): Promise<SuccessEnvelope<IntegratorWalletView>> {
    const key = authenticatedKey(request);
    return ok({ environment: key.environment, ...(await readWalletBalance(this.pool, key.organizationId, key.environment)) });
  }
}
